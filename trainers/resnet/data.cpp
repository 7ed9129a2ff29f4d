#include "trainers/resnet/data.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/run/error.hpp"
#include "core/run/hash.hpp"
#include "core/run/random.hpp"

namespace sp::resnet {

ImageSet read_cifar10_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read CIFAR-10 file '{}'", path);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("cannot read CIFAR-10 file '{}'", path);
  if (bytes.empty() || bytes.size() % kCifarRecordBytes != 0)
    fail("CIFAR-10 file '{}' has {} bytes, not a positive multiple of the {}-byte record", path, bytes.size(),
         kCifarRecordBytes);
  const std::size_t n = bytes.size() / kCifarRecordBytes;
  ImageSet set;
  set.labels.resize(n);
  set.pixels.resize(n * kCifarImageBytes);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* rec = bytes.data() + i * kCifarRecordBytes;
    if (rec[0] > 9) fail("CIFAR-10 file '{}': record {} has label {} (expected 0..9)", path, i, int(rec[0]));
    set.labels[i] = rec[0];
    std::copy(rec + 1, rec + kCifarRecordBytes, set.pixels.begin() + std::ptrdiff_t(i * kCifarImageBytes));
  }
  return set;
}

ImageSet read_cifar10(const std::string& dir, bool train) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) fail("CIFAR-10 directory '{}' does not exist", dir);
  std::vector<std::string> names;
  if (train) {
    for (int i = 1; i <= 5; ++i) names.push_back("data_batch_" + std::to_string(i) + ".bin");
  } else {
    names.push_back("test_batch.bin");
  }
  ImageSet all;
  for (const std::string& name : names) {
    const fs::path p = fs::path(dir) / name;
    if (!fs::exists(p))
      fail(
          "CIFAR-10 file '{}' is missing (the binary version, cifar-10-binary.tar.gz, has "
          "data_batch_1..5.bin and test_batch.bin)",
          p.string());
    ImageSet part = read_cifar10_file(p.string());
    all.labels.insert(all.labels.end(), part.labels.begin(), part.labels.end());
    all.pixels.insert(all.pixels.end(), part.pixels.begin(), part.pixels.end());
  }
  return all;
}

ImageSet synthetic_images(std::size_t n, int num_classes, std::uint64_t seed) {
  if (num_classes < 2) fail("synthetic images need at least 2 classes (got {})", num_classes);
  ImageSet set;
  set.num_classes = num_classes;
  set.labels.resize(n);
  set.pixels.resize(n * kCifarImageBytes);
  const int S = kCifarSide;
  const double pi = 3.141592653589793;
  for (std::size_t i = 0; i < n; ++i) {
    ChainedMix64 rng{sp::hash3(seed, 0x1A6E5, i)};
    const int c = int(rng.below(std::uint64_t(num_classes)));
    set.labels[i] = c;
    // Class pattern: grating direction and frequency, and a colour (per-channel weights and
    // offsets) from a hash of (seed, class), shared by all images of the class.
    ChainedMix64 cls{sp::hash3(seed, 0xC1A55, std::uint64_t(c))};
    const double angle = pi * c / num_classes, freq = 1.0 + double(c % 3);
    double weight[3], offset[3];
    for (int ch = 0; ch < 3; ++ch) {
      weight[ch] = 0.4 + 0.6 * cls.uniform();
      offset[ch] = 40.0 * (2.0 * cls.uniform() - 1.0);
    }
    // Per image: phase, contrast, brightness, pixel noise.
    const double phase = 2.0 * pi * rng.uniform(), contrast = 40.0 + 40.0 * rng.uniform();
    const double bright = 30.0 * (2.0 * rng.uniform() - 1.0);
    const double cx = std::cos(angle) * 2.0 * pi * freq / S, cy = std::sin(angle) * 2.0 * pi * freq / S;
    std::uint8_t* img = set.pixels.data() + i * kCifarImageBytes;
    for (int ch = 0; ch < 3; ++ch)
      for (int y = 0; y < S; ++y)
        for (int x = 0; x < S; ++x) {
          const double v = 128.0 + offset[ch] + bright + contrast * weight[ch] * std::sin(cx * x + cy * y + phase) +
                           20.0 * rng.normal();
          img[(ch * S + y) * S + x] = std::uint8_t(std::clamp(std::lround(v), 0L, 255L));
        }
  }
  return set;
}

void normalize_image(const ImageSet& set, std::size_t i, float* out) {
  const std::size_t plane = std::size_t(set.H) * set.W;
  const std::uint8_t* img = set.pixels.data() + i * set.C * plane;
  for (int c = 0; c < set.C; ++c) {
    const float scale = 1.0f / (255.0f * kCifarStd[c % 3]), shift = -kCifarMean[c % 3] / kCifarStd[c % 3];
    for (std::size_t j = 0; j < plane; ++j) out[c * plane + j] = float(img[c * plane + j]) * scale + shift;
  }
}

ImageLoader::ImageLoader(const ImageSet& set, int B, int rank, int nranks, std::uint64_t seed, bool augment,
                         bool shuffle)
    : set_(&set), B_(B), rank_(rank), nranks_(nranks), seed_(seed), augment_(augment), shuffle_(shuffle) {
  if (B < 1) fail("batch size must be at least 1 (got {})", B);
  if (nranks < 1 || rank < 0 || rank >= nranks) fail("rank {} outside 0..{}", rank, nranks - 1);
  const std::size_t global = std::size_t(B) * nranks;
  if (set.size() < global)
    fail("data set of {} images is smaller than the global batch of {} ({} ranks x {})", set.size(), global, nranks, B);
  if (set.size() > 0xFFFFFFFFull) fail("data set of {} images is too large (at most 2^32)", set.size());
  per_epoch_ = std::int64_t(set.size() / global);
}

const std::vector<std::uint32_t>& ImageLoader::permutation(std::int64_t epoch) const {
  if (cached_epoch_ == epoch) return perm_;
  perm_.resize(set_->size());
  for (std::size_t i = 0; i < perm_.size(); ++i) perm_[i] = std::uint32_t(i);
  if (shuffle_) {  // Fisher-Yates with a generator seeded by (seed, epoch)
    ChainedMix64 rng{sp::hash3(seed_, 0xE90C, std::uint64_t(epoch))};
    for (std::size_t i = perm_.size() - 1; i > 0; --i) std::swap(perm_[i], perm_[rng.below(i + 1)]);
  }
  cached_epoch_ = epoch;
  return perm_;
}

void ImageLoader::batch(std::int64_t index, float* images, int* labels) const {
  if (index < 0) fail("batch index {} is negative", index);
  const ImageSet& set = *set_;
  const std::int64_t epoch = index / per_epoch_, j = index % per_epoch_;
  const std::vector<std::uint32_t>& perm = permutation(epoch);
  const std::size_t G = std::size_t(B_) * nranks_, plane = std::size_t(set.H) * set.W;
  const std::size_t img_numel = set.C * plane;
  std::vector<float> full(img_numel);
  for (int r = 0; r < B_; ++r) {
    const std::size_t row = std::size_t(rank_) * B_ + r;  // row of the global batch
    const std::size_t sample = perm[std::size_t(j) * G + row];
    labels[r] = set.labels[sample];
    float* out = images + r * img_numel;
    if (!augment_) {
      normalize_image(set, sample, out);
      continue;
    }
    normalize_image(set, sample, full.data());
    ChainedMix64 rng{sp::hash3(seed_, std::uint64_t(index), row)};
    const int dy = int(rng.below(9)) - 4, dx = int(rng.below(9)) - 4;  // crop offset in the padding
    const bool flip = rng.below(2) == 1;
    for (int c = 0; c < set.C; ++c) {
      const float pad = -kCifarMean[c % 3] / kCifarStd[c % 3];  // a black pixel, normalised
      for (int y = 0; y < set.H; ++y) {
        for (int x = 0; x < set.W; ++x) {
          const int sy = y + dy, sx = (flip ? set.W - 1 - x : x) + dx;
          const bool inside = sy >= 0 && sy < set.H && sx >= 0 && sx < set.W;
          out[c * plane + std::size_t(y) * set.W + x] = inside ? full[c * plane + std::size_t(sy) * set.W + sx] : pad;
        }
      }
    }
  }
}

ImageData load_image_data(const std::string& dir, long long n_train, long long n_test, int num_classes,
                          std::uint64_t seed) {
  ImageData d;
  if (!dir.empty()) {
    d.train = read_cifar10(dir, true);
    d.test = read_cifar10(dir, false);
    d.source = dir;
  } else {
    ImageSet all = synthetic_images(std::size_t(n_train + n_test), num_classes, seed);
    const std::size_t n = std::size_t(n_train), plane = kCifarImageBytes;
    d.test.labels.assign(all.labels.begin() + std::ptrdiff_t(n), all.labels.end());
    d.test.pixels.assign(all.pixels.begin() + std::ptrdiff_t(n * plane), all.pixels.end());
    all.labels.resize(n);
    all.pixels.resize(n * plane);
    d.train = std::move(all);
    d.test.num_classes = d.train.num_classes;
    d.source = fmt::format("synthetic:{}+{}", n_train, n_test);
  }
  if (d.train.num_classes != num_classes)
    fail("the data has {} classes, the model {}", d.train.num_classes, num_classes);
  return d;
}

std::string fingerprint(const ImageSet& train, const ImageSet& test) {
  Fnv1a h;
  for (const ImageSet* s : {&train, &test})
    h.add(s->labels.data(), s->labels.size() * sizeof(int)).add(s->pixels.data(), s->pixels.size());
  return fmt::format("{:016x}", h.value());
}

}  // namespace sp::resnet
