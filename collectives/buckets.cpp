#include "buckets.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/run/error.hpp"
#include "core/run/sizes.hpp"

namespace sp::coll {
namespace {

void add(GradientLayout& l, std::string name, std::initializer_list<std::size_t> shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) n = checked_product(n, d, name);
  l.tensors.push_back({std::move(name), n});
}

// torchvision resnet50: Bottleneck blocks [3, 4, 6, 3], expansion 4.
GradientLayout resnet50() {
  GradientLayout l{"resnet50", {}};
  add(l, "conv1.weight", {64, 3, 7, 7});
  add(l, "bn1.weight", {64});
  add(l, "bn1.bias", {64});
  const int blocks[] = {3, 4, 6, 3};
  std::size_t inplanes = 64;
  for (int layer = 0; layer < 4; ++layer) {
    std::size_t planes = 64u << layer;
    for (int b = 0; b < blocks[layer]; ++b) {
      std::string p = "layer" + std::to_string(layer + 1) + "." + std::to_string(b) + ".";
      add(l, p + "conv1.weight", {planes, inplanes, 1, 1});
      add(l, p + "bn1.weight", {planes});
      add(l, p + "bn1.bias", {planes});
      add(l, p + "conv2.weight", {planes, planes, 3, 3});
      add(l, p + "bn2.weight", {planes});
      add(l, p + "bn2.bias", {planes});
      add(l, p + "conv3.weight", {planes * 4, planes, 1, 1});
      add(l, p + "bn3.weight", {planes * 4});
      add(l, p + "bn3.bias", {planes * 4});
      if (b == 0) {  // first block of every stage changes channels (and stride): projection shortcut
        add(l, p + "downsample.0.weight", {planes * 4, inplanes, 1, 1});
        add(l, p + "downsample.1.weight", {planes * 4});
        add(l, p + "downsample.1.bias", {planes * 4});
      }
      inplanes = planes * 4;
    }
  }
  add(l, "fc.weight", {1000, 2048});
  add(l, "fc.bias", {1000});
  return l;
}

// bert-base-uncased: vocab 30522, hidden 768, 12 layers, intermediate 3072, 512 positions.
GradientLayout bert_base() {
  GradientLayout l{"bert-base", {}};
  const std::size_t H = 768, I = 3072;
  add(l, "embeddings.word_embeddings.weight", {30522, H});
  add(l, "embeddings.position_embeddings.weight", {512, H});
  add(l, "embeddings.token_type_embeddings.weight", {2, H});
  add(l, "embeddings.LayerNorm.weight", {H});
  add(l, "embeddings.LayerNorm.bias", {H});
  for (int i = 0; i < 12; ++i) {
    std::string p = "encoder.layer." + std::to_string(i) + ".";
    for (const char* m : {"query", "key", "value"}) {
      add(l, p + "attention.self." + m + ".weight", {H, H});
      add(l, p + "attention.self." + m + ".bias", {H});
    }
    add(l, p + "attention.output.dense.weight", {H, H});
    add(l, p + "attention.output.dense.bias", {H});
    add(l, p + "attention.output.LayerNorm.weight", {H});
    add(l, p + "attention.output.LayerNorm.bias", {H});
    add(l, p + "intermediate.dense.weight", {I, H});
    add(l, p + "intermediate.dense.bias", {I});
    add(l, p + "output.dense.weight", {H, I});
    add(l, p + "output.dense.bias", {H});
    add(l, p + "output.LayerNorm.weight", {H});
    add(l, p + "output.LayerNorm.bias", {H});
  }
  add(l, "pooler.dense.weight", {H, H});
  add(l, "pooler.dense.bias", {H});
  return l;
}

std::size_t parse_count(std::string_view s, const std::string& where) {
  std::size_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range && end == s.data() + s.size())
    fail("{}: tensor dimension '{}' does not fit in 64 bits", where, s);
  if (ec != std::errc() || end != s.data() + s.size() || v == 0)
    fail("{}: malformed tensor size '{}' (expected e.g. 9408 or 64x3x7x7)", where, s);
  return v;
}

// The running total of a layout, refused past kMaxLayoutElements (naming `where`).
std::size_t add_elements(std::size_t total, std::size_t numel, const std::string& where) {
  std::size_t sum = 0;
  if (__builtin_add_overflow(total, numel, &sum) || sum > kMaxLayoutElements)
    fail(
        "{}: the layout would hold more than {} elements ({} before this tensor of {}): its byte count "
        "would not fit in 64 bits",
        where, kMaxLayoutElements, total, numel);
  return sum;
}

}  // namespace

std::size_t GradientLayout::total_numel() const {
  std::size_t n = 0;
  for (const auto& t : tensors) n = add_elements(n, t.numel, "layout '" + name + "' tensor '" + t.name + "'");
  return n;
}

GradientLayout GradientLayout::scaled(std::size_t factor) const {
  GradientLayout out = *this;
  std::size_t total = 0;
  for (TensorSpec& t : out.tensors) {
    const std::string what = "--scaling weak tensor '" + t.name + "'";
    t.numel = checked_product(t.numel, factor, what);
    total = add_elements(total, t.numel, what);
  }
  return out;
}

std::vector<std::string> layout_preset_names() { return {"resnet50", "bert-base"}; }

GradientLayout layout_preset(std::string_view name) {
  if (name == "resnet50") return resnet50();
  if (name == "bert-base") return bert_base();
  fail("unknown gradient layout '{}' (presets: resnet50, bert-base; or a file path)", name);
}

GradientLayout load_layout_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open gradient layout file '{}'", path);
  GradientLayout l{path, {}};
  std::size_t total = 0;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) continue;
    std::string where = path + ":" + std::to_string(lineno);
    if (w.size() > 2) fail("{}: expected 'name shape' or 'shape', got '{}'", where, line);
    std::string shape = w.back();
    std::size_t n = 1;
    for (std::size_t pos = 0; pos <= shape.size();) {
      std::size_t x = std::min(shape.find('x', pos), shape.size());
      std::size_t d = parse_count(std::string_view(shape).substr(pos, x - pos), where);
      if (__builtin_mul_overflow(n, d, &n))
        fail("{}: tensor shape '{}' has more elements than fit in 64 bits", where, shape);
      pos = x + 1;
    }
    total = add_elements(total, n, where);
    l.tensors.push_back({w.size() == 2 ? w[0] : "tensor" + std::to_string(l.tensors.size()), n});
  }
  if (l.tensors.empty()) fail("gradient layout file '{}' lists no tensors", path);
  return l;
}

GradientLayout load_layout(const std::string& name_or_path) {
  for (const auto& p : layout_preset_names())
    if (p == name_or_path) return layout_preset(p);
  return load_layout_file(name_or_path);
}

BucketCap parse_bucket_cap(std::string_view text) {
  constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
  if (text == "tensor") return {"tensor", 0, 0};
  if (text == "all") return {"all", kAll, kAll};
  double mib = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), mib);
  if (ec != std::errc() || end != text.data() + text.size() || !(mib > 0) || mib > 1e6)
    fail("malformed bucket cap '{}' (a positive number of MiB, 'tensor' or 'all')", text);
  const auto bytes = static_cast<std::size_t>(std::llround(mib * (1 << 20)));
  if (bytes == 0) fail("bucket cap '{}' is less than one byte (a positive number of MiB, 'tensor' or 'all')", text);
  return {std::string(text), kFirstBucketBytes, bytes};
}

std::vector<Bucket> pack_buckets(const GradientLayout& layout, std::size_t element_bytes, const BucketCap& cap) {
  std::vector<Bucket> buckets;
  Bucket current;
  std::size_t offset = 0;
  // The layout's total is bounded (kMaxLayoutElements), so these sums and products cannot wrap
  // for elements of up to 8 bytes; checked anyway, as layouts can be built in code.
  for (int i = static_cast<int>(layout.tensors.size()) - 1; i >= 0; --i) {
    const std::string& what = layout.tensors[i].name;
    current.tensors.push_back(i);
    current.numel = checked_sum(current.numel, layout.tensors[i].numel, what);
    offset = checked_sum(offset, layout.tensors[i].numel, what);
    std::size_t limit = buckets.empty() ? cap.first_bytes : cap.cap_bytes;
    if (checked_product(current.numel, element_bytes, what) >= limit) {
      buckets.push_back(std::move(current));
      current = Bucket{offset, 0, {}};
    }
  }
  if (!current.tensors.empty()) buckets.push_back(std::move(current));
  return buckets;
}

}  // namespace sp::coll
