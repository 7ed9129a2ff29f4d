// The training state a checkpoint stores for an exact resume, the same in every trainer's format:
// the /train group's attributes step, init_seed, data_seed, next_batch, data_source and
// data_fingerprint. A trainer with more state (ResNet's augment) derives from TrainState and
// writes its own attributes beside these.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>

namespace sp::train {

struct TrainState {
  std::int64_t step = 0;  // optimizer steps completed
  std::uint64_t init_seed = 0;
  std::uint64_t data_seed = 0;
  std::int64_t next_batch = 0;   // next_index of the training data loader
  std::string data_source;       // file or directory, or "synthetic:<size>"
  std::string data_fingerprint;  // hash of the training data, so --resume can refuse other data
};

// What a trainer's read_checkpoint_info finds in a checkpoint: the model configuration and the
// training state (State: TrainState or a trainer's extension of it).
template <typename Config, typename State>
struct CheckpointInfo {
  Config config;
  State state;
};

void write_train_state(hid_t train_group, const TrainState& state);
// Throws sp::Error for a missing attribute or a negative step or batch index.
void read_train_state(hid_t train_group, TrainState& state);

}  // namespace sp::train
