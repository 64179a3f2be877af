"""Run perfmodel commands in one process under an address-space limit (issue #13 sizes).

Reads ``{"as_bytes", "seconds", "jobs": [{"argv", "cwd", "fsize"}]}`` as JSON on stdin and
prints one JSON line per job: ``index``, ``rc``, ``out``, ``err``, ``seconds``, ``note``.
A job that runs past ``seconds`` is interrupted (its outcome says so); ``fsize`` limits the
size of files written during the job (RLIMIT_FSIZE), as a full disk would.
"""

import contextlib
import io
import json
import os
import resource
import signal
import sys
import time
import traceback
import warnings


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def main() -> int:
    request = json.load(sys.stdin)
    limit = int(request["as_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
    import jax

    jax.config.update("jax_enable_x64", True)
    from perfmodel._cli import main as cli

    signal.signal(signal.SIGALRM, _alarm)
    results = sys.stdout
    for index, job in enumerate(request["jobs"]):
        out, err = io.StringIO(), io.StringIO()
        note = ""
        start = time.perf_counter()
        saved_fsize = resource.getrlimit(resource.RLIMIT_FSIZE)
        os.chdir(job["cwd"])
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                with warnings.catch_warnings():
                    warnings.simplefilter("default")
                    if job.get("fsize"):
                        resource.setrlimit(resource.RLIMIT_FSIZE, (job["fsize"], saved_fsize[1]))
                    signal.alarm(int(request["seconds"]))
                    try:
                        rc = int(cli(job["argv"]) or 0)
                    except SystemExit as exit_:
                        rc = exit_.code if isinstance(exit_.code, int) else 1
                    except _Timeout:
                        rc, note = None, f"still running after {request['seconds']} s (stopped)"
                    except BaseException:
                        traceback.print_exc(file=err)
                        rc = 1
                    finally:
                        signal.alarm(0)
                        resource.setrlimit(resource.RLIMIT_FSIZE, saved_fsize)
        except _Timeout:
            rc, note = None, "stopped by the alarm"
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
        note = "; ".join(filter(None, [note, f"peak RSS of the driver so far {peak:.2f} GB"]))
        line = {
            "index": index,
            "rc": rc,
            "out": out.getvalue()[-20000:],
            "err": err.getvalue()[-20000:],
            "seconds": time.perf_counter() - start,
            "note": note,
        }
        results.write(json.dumps(line) + "\n")
        results.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
