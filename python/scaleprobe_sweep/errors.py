"""The one kind of failure the submitter reports to the user."""


class SweepError(Exception):
    """A bad request or a failed SLURM call. cli.main prints it as the single line
    `submit-sweep: error: <message>` and exits 2, like the bash submitter did."""
