// Byte-level token data for the GPT trainer: a text file (each byte is a token, vocab >= 256)
// or a built-in deterministic synthetic corpus with learnable structure; a seeded, reproducible
// train/validation split; and a stateless-by-design batch loader that shards by (rank, nranks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sp::gpt {

// The synthetic corpus: `bytes` bytes of seeded text from a small probabilistic grammar
// (sentences whose verb and object depend on the subject, one-digit sums "3+4=7.", counting
// runs "abcdef", repeated refrains). Only ASCII 10..122, so any vocab >= 128 can model it.
std::vector<std::uint8_t> synthetic_corpus(std::size_t bytes, std::uint64_t seed);
// The file's bytes; throws sp::Error "cannot read data file '...'" or "... is empty".
std::vector<std::uint8_t> read_data_file(const std::string& path);
// 64-bit FNV-1a of the bytes as 16 hex digits: identifies the data in checkpoints.
std::string fingerprint(const std::vector<std::uint8_t>& bytes);

struct TokenSplit {
  std::vector<int> train, val;  // token streams (chunks concatenated in corpus order)
};
// Cuts the corpus into chunks of `chunk` tokens; each chunk goes to validation with probability
// val_fraction (seeded hash of the chunk index), at least one chunk each way. Throws sp::Error
// if a token is >= vocab_size or either stream is shorter than min_len tokens.
TokenSplit split_tokens(const std::vector<std::uint8_t>& bytes, double val_fraction, std::uint64_t seed, int vocab_size,
                        std::size_t min_len, std::size_t chunk = 1024);

// Batches of B rows of T+1 consecutive tokens: inputs = tokens[s .. s+T-1], targets =
// tokens[s+1 .. s+T]. The global batch of step i has nranks*B rows; row r of rank k is global row
// k*B + r, whose start s is a hash of (seed, i, global row), so every rank draws from the same
// global batch without communication, and the whole loader state is the next batch index.
class DataLoader {
 public:
  DataLoader(const std::vector<int>& stream, int B, int T, int rank, int nranks, std::uint64_t seed);
  // Fills inputs and targets ([B, T] each) with this rank's rows of global batch `index`.
  void batch(std::int64_t index, int* inputs, int* targets) const;
  void next(int* inputs, int* targets) { batch(next_index++, inputs, targets); }
  std::int64_t next_index = 0;  // the loader state saved in checkpoints

 private:
  const std::vector<int>* stream_;
  int B_, T_, rank_, nranks_;
  std::uint64_t seed_;
};

}  // namespace sp::gpt
