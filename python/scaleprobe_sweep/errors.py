"""The one kind of failure the submitter reports to the user."""


class SweepError(Exception):
    """A bad request or a failed SLURM call. cli.main prints it as the single line
    `submit-sweep: error: <message>` and exits 2, like the bash submitter did."""


class JobError(Exception):
    """A job that stops: exit status rc (2 = bad configuration or usage, 1 = the run failed) and
    one line, printed as `scaleprobe-job: error: <line>`."""

    def __init__(self, rc: int, message: str):
        super().__init__(message)
        self.rc = rc
