// Gradient layouts and DDP-style bucketing.
//
// A layout is the ordered list of a model's parameter tensors (forward / registration order).
// Backward produces gradients in roughly reverse order, so, like PyTorch DDP (after its first
// iteration's bucket rebuild), tensors are packed in reverse order into buckets that are closed
// as soon as they reach their cap: the first bucket's cap is 1 MiB (DDP's
// _DEFAULT_FIRST_BUCKET_BYTES), later ones use bucket_cap_mb. A tensor is never split, so a
// bucket may exceed its cap by less than one tensor.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sp::coll {

// The most elements a layout may hold: its byte count must fit in 64 bits for every element type
// (up to 8 bytes), so a file cannot make a wrapped byte count allocate too little.
inline constexpr std::size_t kMaxLayoutElements = SIZE_MAX / 8;

struct TensorSpec {
  std::string name;
  std::size_t numel = 0;
};

struct GradientLayout {
  std::string name;
  std::vector<TensorSpec> tensors;  // forward order
  std::size_t total_numel() const;  // sp::Error past kMaxLayoutElements
  // Weak scaling: every tensor factor times larger (sp::Error past kMaxLayoutElements).
  GradientLayout scaled(std::size_t factor) const;
};

// Built from the published parameter shapes: "resnet50" (torchvision, 25,557,032 parameters)
// and "bert-base" (bert-base-uncased BertModel with pooler, 109,482,240 parameters).
std::vector<std::string> layout_preset_names();
GradientLayout layout_preset(std::string_view name);  // throws sp::Error on an unknown name
// Text file: one tensor per line, "name 64x3x7x7" or "name 9408" or just "9408"; '#' comments.
// A shape whose product or a running total past kMaxLayoutElements is an sp::Error naming the line.
GradientLayout load_layout_file(const std::string& path);
// A preset name or a file path.
GradientLayout load_layout(const std::string& name_or_path);

inline constexpr std::size_t kFirstBucketBytes = 1u << 20;

struct BucketCap {
  std::string label;        // "tensor", "25", "all"
  std::size_t first_bytes;  // cap of the first bucket
  std::size_t cap_bytes;    // cap of the later buckets
};
// "tensor" (one bucket per tensor), "all" (one buffer), or a number of MiB like "25" or "0.5".
BucketCap parse_bucket_cap(std::string_view text);

struct Bucket {
  std::size_t offset = 0;  // first element in the backward-ordered flat gradient buffer
  std::size_t numel = 0;
  std::vector<int> tensors;  // forward-order indices, in the order packed (reverse)
};

// Buckets in the order backward fills them; they tile [0, total_numel) of a flat buffer that
// holds the tensors in reverse order.
std::vector<Bucket> pack_buckets(const GradientLayout& layout, std::size_t element_bytes, const BucketCap& cap);

}  // namespace sp::coll
