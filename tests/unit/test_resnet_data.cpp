// The image data of trainers/resnet: the CIFAR-10 reader on small hand-made files and its error
// messages, and the sharded, epoch-based, augmenting loader. Part of test_resnet_model.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/run/error.hpp"
#include "trainers/resnet/data.hpp"

using namespace sp::resnet;

namespace {
struct TempDir {
  std::filesystem::path path;
  TempDir() : path(std::filesystem::temp_directory_path() / ("resnet_test_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};
// A CIFAR-10 record: label, then pixel j of the image = (seed + j) mod 251.
void write_records(const std::filesystem::path& p, const std::vector<int>& labels, int seed, std::size_t extra = 0) {
  std::ofstream out(p, std::ios::binary);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out.put(char(labels[i]));
    for (std::size_t j = 0; j < kCifarImageBytes; ++j) out.put(char((seed + i + j) % 251));
  }
  for (std::size_t j = 0; j < extra; ++j) out.put(0);
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sp::Error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(ResNetData, Cifar10ReaderAndErrors) {
  TempDir dir;
  for (int i = 1; i <= 5; ++i) write_records(dir.path / ("data_batch_" + std::to_string(i) + ".bin"), {i, 9}, i);
  write_records(dir.path / "test_batch.bin", {0, 3, 7}, 100);
  const ImageSet train = read_cifar10(dir.path.string(), true), test = read_cifar10(dir.path.string(), false);
  ASSERT_EQ(train.size(), 10u);
  ASSERT_EQ(test.size(), 3u);
  EXPECT_EQ(train.labels, (std::vector<int>{1, 9, 2, 9, 3, 9, 4, 9, 5, 9}));
  EXPECT_EQ(test.labels, (std::vector<int>{0, 3, 7}));
  EXPECT_EQ(train.pixels[0], 1);                    // file 1, record 0, R(0,0)
  EXPECT_EQ(train.pixels[1024], (1 + 1024) % 251);  // G plane starts at byte 1024
  EXPECT_EQ(test.pixels[kCifarImageBytes + 5], (100 + 1 + 5) % 251);
  std::vector<float> img(kCifarImageBytes);
  normalize_image(test, 0, img.data());
  EXPECT_NEAR(img[0], (100 / 255.0 - 0.4914) / 0.2470, 1e-5);
  EXPECT_NEAR(img[2048], ((100 + 2048) % 251 / 255.0 - 0.4465) / 0.2616, 1e-5);  // B plane

  const std::string d = dir.path.string();
  EXPECT_EQ(error_of([&] { read_cifar10(d + "/nope", true); }), "CIFAR-10 directory '" + d + "/nope' does not exist");
  write_records(dir.path / "test_batch.bin", {1, 2}, 0, 1);  // one stray byte
  EXPECT_EQ(error_of([&] { read_cifar10(d, false); }),
            "CIFAR-10 file '" + d + "/test_batch.bin' has 6147 bytes, not a positive multiple of the 3073-byte record");
  write_records(dir.path / "test_batch.bin", {1, 10}, 0);
  EXPECT_EQ(error_of([&] { read_cifar10(d, false); }),
            "CIFAR-10 file '" + d + "/test_batch.bin': record 1 has label 10 (expected 0..9)");
  std::filesystem::remove(dir.path / "data_batch_3.bin");
  const std::string missing = error_of([&] { read_cifar10(d, true); });
  EXPECT_EQ(missing.rfind("CIFAR-10 file '" + d + "/data_batch_3.bin' is missing", 0), 0u) << missing;
  std::ofstream(dir.path / "empty.bin").close();
  EXPECT_NE(error_of([&] { read_cifar10_file(d + "/empty.bin"); }).find("has 0 bytes"), std::string::npos);
}

TEST(ResNetData, LoaderShardsEpochsAndAugments) {
  const ImageSet set = synthetic_images(100, 10, 3);
  EXPECT_EQ(synthetic_images(100, 10, 3).pixels, set.pixels);  // deterministic
  EXPECT_EQ(std::vector<std::uint8_t>(synthetic_images(10, 10, 3).pixels),
            std::vector<std::uint8_t>(set.pixels.begin(),
                                      set.pixels.begin() + std::ptrdiff_t(10 * kCifarImageBytes)));  // prefix-stable
  const std::size_t n = kCifarImageBytes;
  // One rank of 8 and two ranks of 4 see the same global batch, augmentations included.
  for (bool augment : {false, true}) {
    ImageLoader one(set, 8, 0, 1, 5, augment), r0(set, 4, 0, 2, 5, augment), r1(set, 4, 1, 2, 5, augment);
    std::vector<float> a(8 * n), b(8 * n);
    std::vector<int> la(8), lb(8);
    for (std::int64_t idx : {0, 3, 13}) {  // 12 batches per epoch: 13 is in epoch 1
      one.batch(idx, a.data(), la.data());
      r0.batch(idx, b.data(), lb.data());
      r1.batch(idx, b.data() + 4 * n, lb.data() + 4);
      EXPECT_EQ(a, b);
      EXPECT_EQ(la, lb);
    }
  }
  // Without augmentation an epoch visits distinct images (the 4 left over are dropped).
  ImageLoader plain(set, 8, 0, 1, 5, false);
  EXPECT_EQ(plain.batches_per_epoch(), 12);
  std::vector<float> x(8 * n), ref(n);
  std::vector<int> l(8);
  std::set<std::size_t> seen;
  for (std::int64_t idx = 0; idx < 12; ++idx) {
    plain.batch(idx, x.data(), l.data());
    for (int r = 0; r < 8; ++r)
      for (std::size_t i = 0; i < set.size(); ++i) {
        normalize_image(set, i, ref.data());
        if (std::equal(ref.begin(), ref.end(), x.begin() + std::ptrdiff_t(r * n))) {
          EXPECT_EQ(l[r], set.labels[i]);
          seen.insert(i);
        }
      }
  }
  EXPECT_EQ(seen.size(), 96u);
  // With augmentation every image is a crop (offset -4..4) of the zero-padded, maybe flipped source.
  ImageLoader aug(set, 8, 0, 1, 5, true);
  int flips = 0, shifts = 0;
  for (std::int64_t idx = 0; idx < 4; ++idx) {
    aug.batch(idx, x.data(), l.data());
    std::vector<float> src(8 * n);
    plain.batch(idx, src.data(), l.data());
    for (int r = 0; r < 8; ++r) {
      const float* s = src.data() + r * n;
      const float* o = x.data() + r * n;
      bool found = false;
      for (int flip = 0; flip < 2 && !found; ++flip)
        for (int dy = -4; dy <= 4 && !found; ++dy)
          for (int dx = -4; dx <= 4 && !found; ++dx) {
            bool ok = true;
            for (int c = 0; c < 3 && ok; ++c)
              for (int y = 0; y < 32 && ok; ++y)
                for (int xx = 0; xx < 32 && ok; ++xx) {
                  const int sy = y + dy, sx = (flip ? 31 - xx : xx) + dx;
                  const float pad = -kCifarMean[c] / kCifarStd[c];
                  const float want = (sy >= 0 && sy < 32 && sx >= 0 && sx < 32) ? s[c * 1024 + sy * 32 + sx] : pad;
                  ok = o[c * 1024 + y * 32 + xx] == want;
                }
            if (ok) {
              found = true;
              flips += flip;
              shifts += dy != 0 || dx != 0;
            }
          }
      EXPECT_TRUE(found) << "batch " << idx << " row " << r;
    }
  }
  EXPECT_GT(flips, 4);
  EXPECT_GT(shifts, 16);
  EXPECT_THROW(ImageLoader(set, 64, 0, 2, 1, false), sp::Error);  // global batch 128 > 100 images
}
