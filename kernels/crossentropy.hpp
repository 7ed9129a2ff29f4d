// Fused softmax + cross-entropy over the vocabulary.
#pragma once

namespace sp::kernels {

// logits: [B, T, V]   targets: [B, T], each in [0, V)
// probs:  [B, T, V]   softmax of logits over V (written, saved for backward)
// losses: [B, T]      losses[b,t] = -log probs[b,t,targets[b,t]], computed as
//                     logsumexp(logits[b,t,:]) - logits[b,t,target] so it stays finite even
//                     when the target's probability underflows to 0 in float.
// The mean loss is the caller's sum(losses) / (B*T).
void softmax_crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int B, int T,
                                  int V);

// dlogits [B, T, V] += dloss * (probs - onehot(targets)) (= when accumulate is false): the
// gradient of L = dloss * sum_{b,t} losses[b,t]. For the mean loss pass dloss = 1 / (B*T).
void softmax_crossentropy_backward(float* dlogits, const float* probs, const int* targets, float dloss, int B, int T,
                                   int V, bool accumulate = true);

}  // namespace sp::kernels
