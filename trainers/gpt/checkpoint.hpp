// GPT checkpoints in HDF5 (serial, written by one process under "<path>.partial" and renamed;
// trainers/common/checkpoint_io.hpp).
//
// Layout (format "scaleprobe-gpt-checkpoint", version 2: Fletcher32 on every array dataset,
// checksummed HDF5 1.8 object headers; version 1, without checksums, still loads):
//   root attributes  format, format_version, model_name, vocab_size, max_seq_len, channels,
//                    num_layers, num_heads, num_parameters, weight_layout ("nn.Linear [out, in]")
//   /model/<name>    float32, one dataset per parameter with its shape, named as in PyTorch's
//                    GPT-2 ("transformer.h.0.attn.c_attn.weight", ...). Linear weights are in
//                    nn.Linear layout [out_features, in_features]; HF GPT-2 (Conv1D) stores the
//                    transpose. The LM head is tied to transformer.wte.weight and not stored.
//   /optimizer       exp_avg, exp_avg_sq: float32 [num_parameters], the flat AdamW moments in
//                    the parameter-table order; attribute adam_step
//   /train           attributes step, init_seed, data_seed, next_batch (data-loader state),
//                    data_source, data_fingerprint
//   /check           tokens int32 [1, T] and logits float32 [1, T, V]: what this model computed
//                    on a fixed input, so another implementation can check it loads the weights
//                    right (python/scaleprobe_peers/gpt_checkpoint.py)
#pragma once

#include <string>

#include "trainers/common/train_state.hpp"
#include "trainers/gpt/model.hpp"

namespace sp::gpt {

// next_batch: DataLoader::next_index of the training loader; data_source: the text file or
// "synthetic:<bytes>"; data_fingerprint: fingerprint() of the corpus bytes.
using TrainState = train::TrainState;

// Writes everything above. Runs one small forward pass (B = 1) for /check, which overwrites the
// model's activations (not its parameters, gradients or optimizer state).
void save_checkpoint(const std::string& path, GPT& model, const TrainState& state);

using CheckpointInfo = train::CheckpointInfo<GPTConfig, TrainState>;
// Reads the configuration and training state; throws sp::Error
// "cannot load checkpoint '<path>': <problem>" for a missing, corrupt or foreign file.
CheckpointInfo read_checkpoint_info(const std::string& path);
// Loads the parameters (and, with optimizer, the AdamW moments and step) into a model of the
// same configuration; every dataset's shape is checked.
void load_checkpoint(const std::string& path, GPT& model, bool optimizer);

}  // namespace sp::gpt
