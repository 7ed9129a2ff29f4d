// Fuzz target: the CIFAR-10 binary reader (trainers/resnet/data.cpp, read_cifar10_file) and the
// loader that consumes what it returns (ImageLoader with and without augmentation).
//
// Input: the bytes of one .bin file (seeds: records of the synthetic image set, make_seeds.sh).
// Besides "sp::Error or success": every label is in 0..9 and the pixels hold one image per label.
#include <vector>

#include "core/run/error.hpp"
#include "fuzz_util.hpp"
#include "trainers/resnet/data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static sp::fuzz::InputFile file(".bin");
  const auto read = sp::fuzz::read_input_file(file, data, size, sp::resnet::read_cifar10_file);
  if (!read) return 0;
  const sp::resnet::ImageSet& set = *read;
  if (set.size() == 0 || set.pixels.size() != set.size() * sp::resnet::kCifarImageBytes)
    sp::fuzz::finding("read_cifar10_file: pixels do not hold one image per label");
  for (int label : set.labels)
    if (label < 0 || label > 9) sp::fuzz::finding("read_cifar10_file: label outside 0..9");
  const int B = set.size() >= 2 ? 2 : 1;
  std::vector<float> images(std::size_t(B) * sp::resnet::kCifarImageBytes);
  std::vector<int> labels(B);
  for (bool augment : {false, true}) {
    sp::resnet::ImageLoader loader(set, B, 0, 1, size, augment);
    for (std::int64_t i = 0; i < 3; ++i) loader.batch(i, images.data(), labels.data());
  }
  return 0;
}
