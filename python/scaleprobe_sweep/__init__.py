"""The sweep submitter behind jobs/submit-sweep and the in-job code behind jobs/*.sbatch
(standard library only: it runs on login and compute nodes).

A campaign is declared as data, a campaign file or the flags of one sweep, expanded to points
(benchmark x the sweep dimensions x nodes x tasks per node x CPUs per task, each run `repeat`
times) and submitted as SLURM jobs of jobs/<bench>.sbatch, resumably; each job runs one point.

  errors.py     SweepError: a bad request, reported as one line with exit 2
  settings.py   every setting of a sweep: its flag, campaign-file key, default and allowed values
  campaign.py   campaign files and the command line -> a validated Campaign -> its points
  dimensions.py the sweep dimensions (scaling, launcher, backend, GPUs): flags, variables, names
  naming.py     trace, log and job names (the job names its trace with the same functions)
  benchargs.py  benchmark arguments the job scripts own (-o, --save, --scaling, ...)
  manifest.py   <campaign>/manifest.tsv and <campaign>/campaign.json
  slurm.py      sbatch and squeue with timeouts; the printed, pasteable sbatch lines
  submit.py     resume decisions, submissions (jobs or arrays), the report job
  cli.py        flags, --help, main()
  job.py        inside a job: settings, the point, the run, trace_check, the report job
  launch.py     inside a job: srun/mpirun command lines and the rank map
  trainer_job.py  inside a trainer job: checkpoint, signal forwarding, segments, requeue
"""
