#include "trainers/common/train_state.hpp"

#include "core/run/error.hpp"
#include "core/trace/h5.hpp"

namespace sp::train {

void write_train_state(hid_t g, const TrainState& st) {
  h5::write_attribute(g, "step", st.step);
  // HDF5 attributes here are int64: the unsigned seeds are stored by their bits.
  h5::write_attribute(g, "init_seed", std::int64_t(st.init_seed));
  h5::write_attribute(g, "data_seed", std::int64_t(st.data_seed));
  h5::write_attribute(g, "next_batch", st.next_batch);
  h5::write_attribute(g, "data_source", st.data_source);
  h5::write_attribute(g, "data_fingerprint", st.data_fingerprint);
}

void read_train_state(hid_t g, TrainState& st) {
  st.step = h5::read_int_attribute(g, "step");
  st.init_seed = std::uint64_t(h5::read_int_attribute(g, "init_seed"));
  st.data_seed = std::uint64_t(h5::read_int_attribute(g, "data_seed"));
  st.next_batch = h5::read_int_attribute(g, "next_batch");
  st.data_source = h5::read_string_attribute(g, "data_source");
  st.data_fingerprint = h5::read_string_attribute(g, "data_fingerprint");
  if (st.step < 0 || st.next_batch < 0) fail("negative step or batch index");
}

}  // namespace sp::train
