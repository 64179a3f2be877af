"""The runtime type checker the tests apply to perfmodel's annotations (jaxtyping +
beartype), with PEP 484's numeric tower so that an int passes where a float is annotated."""

from beartype import beartype, BeartypeConf

checker = beartype(conf=BeartypeConf(is_pep484_tower=True))
