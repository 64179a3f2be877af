"""Pictures and documents of a fit: plots and self-contained reports."""

from .plot import curves as curves
from .plot import figure as figure
from .plot import FIGURE_FORMATS as FIGURE_FORMATS
from .plot import plot_breakdown as plot_breakdown
from .plot import plot_efficiency as plot_efficiency
from .plot import plot_fit as plot_fit
from .plot import plot_measurements as plot_measurements
from .plot import plot_speedup as plot_speedup
from .plot import save_figure as save_figure
from .report import REPORT_FORMATS as REPORT_FORMATS
from .report import report_html as report_html
from .report import training_figure_path as training_figure_path
from .report import write_report as write_report
from .training_figure import plot_time_to_train as plot_time_to_train
