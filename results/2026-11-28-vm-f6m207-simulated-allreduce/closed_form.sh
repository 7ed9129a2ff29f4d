#!/bin/bash
# The ring rows of measure.log's last section against t = 2(p-1)(2 alpha + (n/p)/beta), p = 8,
# alpha = 1 us per host link (two per step), beta = 12.5 GB/s:  bash closed_form.sh > closed_form.txt
awk '/^## ring closed form/ { f = 1 } f && !/^[#[]/ && $6 == "ring" {
  n = $2 * 4; model = 2 * 7 * (2e-6 + (n / 8) / 12.5e9) * 1e6
  printf "ring %s on 8 one-rank hosts: simulated %.2f us, closed form %.2f us, simulated / closed form %.4f\n", $1, $9, model, $9 / model
}' "$(dirname "$0")/measure.log"
