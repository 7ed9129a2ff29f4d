"""scripts/bench-peers (every comparison of scaleprobe with the peer a user would otherwise reach
for, stored as a campaign) and the PyTorch peers it runs, each a module run with ``python -m``.

The driver (needs h5py and scaleprobe_analysis where it reads traces; never torch):
  plan.py             the profiles: what is compared, how many passes and steps
  runs.py             running one side of a comparison and reading its number back from what it stored
  summary.py          summary.tsv and summary.md: every pass, medians, ranges
  overlap.py          the overlap table of scaleprobe's data-parallel runs
  scaling.py          weak scaling at 1…N ranks beside PyTorch DDP (also run on the GPU node)
  doc.py              docs/performance.md's generated section
  campaign_folder.py  what every stored campaign gets: titles, summary.md, README provenance, report
  from_node.py        --from-node: scripts/device/node-scaling.sh's tarball made a campaign
  cli.py              flags, main() (``python -m scaleprobe_peers``)

The PyTorch peers (need torch; h5py only for --init):
  torch_peer.py       what they share: same initial weights, threads, warm-up, median
  ddp_peer.py         the data-parallel peers' harness: DDP per bucket cap, launcher, summary
  gpt_model.py        the GPT-2 of gpt_train as a torch module
  gpt_torch.py        gpt_train's steps in PyTorch, one rank
  gpt_ddp_torch.py    data-parallel gpt_train's steps under PyTorch DDP (gloo), per bucket cap
  resnet_torch.py     resnet_train's model and steps in PyTorch, one rank
  resnet_ddp_torch.py the same under PyTorch DDP (gloo)
  gloo_torch.py       PyTorch's Gloo allreduce timed per call (allreduce_perf's gloo peer)
  gpt_checkpoint.py   a gpt_train checkpoint loaded into gpt_model.GPT, its logits checked
"""
