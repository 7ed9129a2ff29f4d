// Image data for the ResNet trainer: the CIFAR-10 binary format, a built-in deterministic
// synthetic image set with learnable class structure (so training runs with no files), and a
// stateless-by-design batch loader that shards by (rank, nranks) like trainers/gpt's DataLoader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sp::resnet {

// CIFAR-10 binary version (cifar-10-binary.tar.gz): data_batch_1.bin .. data_batch_5.bin (train,
// 10,000 images each) and test_batch.bin; each record is 1 label byte (0..9) + 3072 pixel bytes,
// the 32x32 R plane, then G, then B, rows top to bottom.
inline constexpr int kCifarSide = 32;
inline constexpr std::size_t kCifarImageBytes = 3 * 32 * 32;
inline constexpr std::size_t kCifarRecordBytes = kCifarImageBytes + 1;

// Per-channel mean and standard deviation of the CIFAR-10 training images (pixel / 255), the
// usual Normalize() constants; used for the synthetic images too.
inline constexpr float kCifarMean[3] = {0.4914f, 0.4822f, 0.4465f};
inline constexpr float kCifarStd[3] = {0.2470f, 0.2435f, 0.2616f};

// Images as bytes, [N, C, H, W] row-major (the CIFAR record order), labels [N].
struct ImageSet {
  int C = 3, H = kCifarSide, W = kCifarSide;
  int num_classes = 10;
  std::vector<std::uint8_t> pixels;
  std::vector<int> labels;
  std::size_t size() const { return labels.size(); }
};

// One CIFAR-10 .bin file. Throws sp::Error "cannot read CIFAR-10 file '...'", "... has N bytes,
// not a positive multiple of the 3073-byte record", "... record i has label L (expected 0..9)".
ImageSet read_cifar10_file(const std::string& path);
// The training set (data_batch_1..5.bin, 50,000 images) or the test set (test_batch.bin) of
// directory dir. Throws sp::Error if dir does not exist or a file is missing or malformed.
ImageSet read_cifar10(const std::string& dir, bool train);

// n seeded 32x32 RGB images in num_classes classes (label = a hash of (seed, i), so balanced on
// average). Class c is an oriented sinusoidal grating (angle pi*c/classes, 1..3 cycles) in a
// class colour, with per-image random phase, contrast, brightness and Gaussian pixel noise.
// Image i depends only on (seed, i), so sets of different sizes share their prefix.
ImageSet synthetic_images(std::size_t n, int num_classes, std::uint64_t seed);

// A run's train and test sets: CIFAR-10 from dir or, with dir empty, synthetic images (the first
// n_train for training, the next n_test for testing); source names them ("synthetic:<n>+<m>").
struct ImageData {
  ImageSet train, test;
  std::string source;
};
// Throws sp::Error naming a missing or malformed file, or a class count other than num_classes.
ImageData load_image_data(const std::string& dir, long long n_train, long long n_test, int num_classes,
                          std::uint64_t seed);
// FNV-1a over the labels and pixels of both sets, so --resume can refuse other data.
std::string fingerprint(const ImageSet& train, const ImageSet& test);

// out [C, H, W] = (pixel / 255 - mean[c]) / std[c] of image i, no augmentation.
void normalize_image(const ImageSet& set, std::size_t i, float* out);

// Batches of B images per rank out of a global batch of B * nranks: global batch `index` of
// epoch e = index / batches_per_epoch() takes positions [j*G, (j+1)*G) (j = index mod
// batches_per_epoch, G = B * nranks) of the epoch's permutation of the set (seeded by
// (seed, e); identity without shuffle; the last incomplete global batch of an epoch is
// dropped), and rank r gets rows [r*B, (r+1)*B). So p ranks with batch B see exactly the images
// (and augmentations) of one rank with batch p*B, and the whole loader state is next_index.
// Augmentation (training): random crop of the image padded by 4 black pixels on each side and a
// horizontal flip with probability 1/2 (torchvision RandomCrop(32, 4) + RandomHorizontalFlip),
// drawn from a hash of (seed, index, global row). Not thread-safe (caches one permutation).
class ImageLoader {
 public:
  ImageLoader(const ImageSet& set, int B, int rank, int nranks, std::uint64_t seed, bool augment, bool shuffle = true);
  // images: [B, C, H, W] normalised floats; labels: [B].
  void batch(std::int64_t index, float* images, int* labels) const;
  void next(float* images, int* labels) { batch(next_index++, images, labels); }
  std::int64_t batches_per_epoch() const { return per_epoch_; }
  std::int64_t next_index = 0;  // the loader state to save in checkpoints

 private:
  const std::vector<std::uint32_t>& permutation(std::int64_t epoch) const;
  const ImageSet* set_;
  int B_, rank_, nranks_;
  std::uint64_t seed_;
  bool augment_, shuffle_;
  std::int64_t per_epoch_;
  mutable std::int64_t cached_epoch_ = -1;
  mutable std::vector<std::uint32_t> perm_;
};

}  // namespace sp::resnet
