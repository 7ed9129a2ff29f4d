"""The sweep submitter behind jobs/submit-sweep (standard library only: it runs on a login node).

A campaign is declared as data, a campaign file or the flags of one sweep, expanded to points
(benchmark x scaling x launcher x nodes x tasks per node x CPUs per task, each run `repeat`
times) and submitted as SLURM jobs of jobs/<bench>.sbatch, resumably.

  errors.py     SweepError: a bad request, reported as one line with exit 2
  settings.py   every setting of a sweep: its flag, campaign-file key, default and allowed values
  campaign.py   campaign files and the command line -> a validated Campaign -> its points
  naming.py     point, trace, log and job names (jobs/lib/common.sh names traces the same way)
  benchargs.py  benchmark arguments the job scripts own (-o, --save, --scaling, ...)
  manifest.py   <campaign>/manifest.tsv and <campaign>/campaign.json
  slurm.py      sbatch and squeue with timeouts; the printed, pasteable sbatch lines
  submit.py     resume decisions, submissions (jobs or arrays), the report job
  cli.py        flags, --help, main()
"""
