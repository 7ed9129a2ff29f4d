#include "trainers/gpt/data.hpp"

#include <array>
#include <fstream>
#include <iterator>

#include "core/run/error.hpp"
#include "core/run/hash.hpp"
#include "core/run/random.hpp"

namespace sp::gpt {

std::vector<std::uint8_t> synthetic_corpus(std::size_t bytes, std::uint64_t seed) {
  // Each subject has its own verbs and objects: a model that learns the grammar predicts the
  // rest of a sentence from its subject.
  struct Subject {
    const char* noun;
    std::array<const char*, 2> verbs;
    std::array<const char*, 3> objects;
  };
  static const Subject subjects[] = {
      {"cat", {"chases", "watches"}, {"the mouse", "a bird", "the red ball"}},
      {"dog", {"fetches", "buries"}, {"the stick", "a bone", "the old shoe"}},
      {"girl", {"reads", "writes"}, {"a book", "the letter", "a long poem"}},
      {"farmer", {"plants", "sells"}, {"the corn", "ripe apples", "green beans"}},
      {"sailor", {"steers", "paints"}, {"the boat", "a white sail", "the deck"}},
      {"baker", {"bakes", "slices"}, {"warm bread", "a cake", "the pie"}},
  };
  static const char* adjectives[] = {"small", "happy", "quiet", "clever", "tired"};
  static const char* refrains[] = {"and so the day goes on.\n", "the end of the story.\n"};
  ChainedMix64 rng{mix64(seed ^ 0x5EEDC0DEull)};
  std::string text;
  text.reserve(bytes + 64);
  while (text.size() < bytes) {
    const int kind = rng.below(10);
    if (kind < 6) {  // sentence
      const Subject& s = subjects[rng.below(6)];
      text += "the ";
      if (rng.below(2)) {
        text += adjectives[rng.below(5)];
        text += ' ';
      }
      text += s.noun;
      text += ' ';
      text += s.verbs[rng.below(2)];
      text += ' ';
      text += s.objects[rng.below(3)];
      text += ".\n";
    } else if (kind < 8) {  // one-digit sum
      const int a = rng.below(10), b = rng.below(10);
      text += std::to_string(a) + "+" + std::to_string(b) + "=" + std::to_string(a + b) + ".\n";
    } else if (kind < 9) {  // counting run of the alphabet
      const int start = rng.below(20), len = 4 + rng.below(7);
      for (int i = 0; i < len; ++i) text += char('a' + start + i);
      text += '\n';
    } else {
      text += refrains[rng.below(2)];
    }
  }
  text.resize(bytes);
  return {text.begin(), text.end()};
}

std::vector<std::uint8_t> read_data_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read data file '{}'", path);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("cannot read data file '{}'", path);
  if (bytes.empty()) fail("data file '{}' is empty", path);
  return bytes;
}

std::string fingerprint(const std::vector<std::uint8_t>& bytes) {
  return fmt::format("{:016x}", Fnv1a().add(bytes.data(), bytes.size()).value());
}

TokenSplit split_tokens(const std::vector<std::uint8_t>& bytes, double val_fraction, std::uint64_t seed, int vocab_size,
                        std::size_t min_len, std::size_t chunk) {
  for (std::size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] >= vocab_size)
      fail("data byte {} at offset {} does not fit the vocabulary of {} tokens (byte-level data needs vocab 256)",
           int(bytes[i]), i, vocab_size);
  const std::size_t nchunks = (bytes.size() + chunk - 1) / chunk;
  std::vector<char> is_val(nchunks, 0);
  std::size_t nval = 0;
  for (std::size_t c = 0; c < nchunks; ++c) {
    const double u = double(sp::hash3(seed, 0xDA7A, c) >> 11) * 0x1.0p-53;
    is_val[c] = u < val_fraction;
    nval += is_val[c];
  }
  if (nchunks >= 2) {  // at least one chunk each way
    if (nval == 0) is_val[nchunks - 1] = 1;
    if (nval == nchunks) is_val[0] = 0;
  }
  TokenSplit s;
  for (std::size_t c = 0; c < nchunks; ++c) {
    auto& dst = is_val[c] ? s.val : s.train;
    const std::size_t end = std::min(bytes.size(), (c + 1) * chunk);
    for (std::size_t i = c * chunk; i < end; ++i) dst.push_back(bytes[i]);
  }
  if (s.train.size() < min_len || s.val.size() < min_len)
    fail("data too short: {} train and {} validation tokens, each needs at least {} (sequence length + 1)",
         s.train.size(), s.val.size(), min_len);
  return s;
}

DataLoader::DataLoader(const std::vector<int>& stream, int B, int T, int rank, int nranks, std::uint64_t seed)
    : stream_(&stream), B_(B), T_(T), rank_(rank), nranks_(nranks), seed_(seed) {
  if (stream.size() < std::size_t(T) + 1) fail("token stream of {} shorter than T+1 = {}", stream.size(), T + 1);
}

void DataLoader::batch(std::int64_t index, int* inputs, int* targets) const {
  const std::uint64_t starts = stream_->size() - std::size_t(T_);  // s in [0, n-T-1]
  for (int r = 0; r < B_; ++r) {
    const std::uint64_t row = std::uint64_t(rank_) * B_ + r;
    const std::size_t s = sp::hash3(seed_, std::uint64_t(index), row) % starts;
    const int* src = stream_->data() + s;
    for (int t = 0; t < T_; ++t) {
      inputs[std::size_t(r) * T_ + t] = src[t];
      targets[std::size_t(r) * T_ + t] = src[t + 1];
    }
  }
  (void)nranks_;
}

}  // namespace sp::gpt
