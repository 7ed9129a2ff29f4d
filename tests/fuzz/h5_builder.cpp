#include "h5_builder.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/trace/file_digest.hpp"
#include "core/trace/h5.hpp"
#include "fuzz_util.hpp"

namespace sp::fuzz {
namespace {

constexpr std::int64_t kInts[] = {0,
                                  1,
                                  2,
                                  3,
                                  -1,
                                  4,
                                  8,
                                  10,
                                  16,
                                  1000,
                                  std::int64_t(1) << 32,
                                  std::int64_t(1) << 62,
                                  std::numeric_limits<std::int64_t>::max(),
                                  std::numeric_limits<std::int64_t>::min()};

struct Reader {
  const std::uint8_t* p;
  std::size_t n;
  bool more() const { return n > 0; }
  std::uint8_t byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
};

struct Value {
  std::int64_t integer = 0;
  std::string text;
  bool raw = false;
  std::uint8_t bytes[8] = {};
};

h5::Dataspace make_space(int shape) {
  static const std::vector<std::vector<hsize_t>> kShapes = {{}, {1}, {2}, {3}, {2, 2}, {}, {0}, {17}};
  const int s = shape % 8;
  if (s == 0) return h5::Dataspace(H5Screate(H5S_SCALAR));
  if (s == 5) return h5::Dataspace(H5Screate(H5S_NULL));
  const auto& d = kShapes[s];
  return h5::Dataspace(H5Screate_simple(int(d.size()), d.data(), nullptr));
}

hsize_t points(hid_t space) {
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  return n > 0 ? hsize_t(n) : 0;
}

// The file type and a buffer of n elements of it holding the value (element i: integer + i).
struct Typed {
  h5::Datatype type;
  std::vector<std::uint8_t> buf;
  std::vector<const char*> vlen;  // variable-length strings point into text
};

Typed make_typed(int t, hsize_t n, const Value& v) {
  Typed out;
  auto fill = [&](auto zero, hid_t base) {
    using T = decltype(zero);
    out.type = h5::Datatype(H5Tcopy(base));
    out.buf.resize(std::max<hsize_t>(n, 1) * sizeof(T));
    for (hsize_t i = 0; i < std::max<hsize_t>(n, 1); ++i) {
      T x{};
      if (v.raw)
        std::memcpy(&x, v.bytes, sizeof(T));
      else
        x = T(std::int64_t(std::uint64_t(v.integer) + i));  // wraps at INT64_MAX, no UB
      std::memcpy(out.buf.data() + i * sizeof(T), &x, sizeof(T));
    }
  };
  switch (t % 8) {
    case 0:
      fill(std::int64_t{}, H5T_NATIVE_INT64);
      break;
    case 1:
      fill(std::int32_t{}, H5T_NATIVE_INT32);
      break;
    case 2:
      fill(std::uint8_t{}, H5T_NATIVE_UINT8);
      break;
    case 3:
      fill(double{}, H5T_NATIVE_DOUBLE);
      break;
    case 4:
      fill(float{}, H5T_NATIVE_FLOAT);
      break;
    case 6: {
      out.type = h5::Datatype(H5Tcopy(H5T_C_S1));
      H5Tset_size(out.type, H5T_VARIABLE);
      out.vlen.assign(std::max<hsize_t>(n, 1), v.text.c_str());
      break;
    }
    default: {  // 5: fixed string of the value's length, 7: of one byte (truncated)
      const std::size_t len = t % 8 == 7 ? 1 : std::max<std::size_t>(v.text.size(), 1);
      out.type = h5::fixed_string_type(len);
      out.buf.assign(std::max<hsize_t>(n, 1) * len, 0);
      for (hsize_t i = 0; i < std::max<hsize_t>(n, 1); ++i)
        std::memcpy(out.buf.data() + i * len, v.text.data(), std::min(len, v.text.size()));
    }
  }
  return out;
}

const void* data_of(const Typed& t) {
  return t.vlen.empty() ? static_cast<const void*>(t.buf.data()) : static_cast<const void*>(t.vlen.data());
}

Value read_value(Reader& r, const H5Vocabulary& vocab, bool raw) {
  Value v;
  if (raw) {
    v.raw = true;
    for (auto& b : v.bytes) b = r.byte();
    v.text.assign(reinterpret_cast<const char*>(v.bytes), 8);
    v.text.resize(strnlen(v.text.c_str(), 8));
    return v;
  }
  const std::uint8_t i = r.byte();
  v.integer = kInts[i % std::size(kInts)];
  v.text = vocab.strings.empty() ? "" : vocab.strings[i % vocab.strings.size()];
  return v;
}

void add_attribute(hid_t obj, const std::string& name, int type, int shape, const Value& v) {
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  h5::Dataspace space = make_space(shape);
  Typed t = make_typed(type, points(space), v);
  h5::Attribute a(H5Acreate2(obj, name.c_str(), t.type, space, H5P_DEFAULT, H5P_DEFAULT));
  if (a.get() >= 0 && H5Sget_simple_extent_type(space) != H5S_NULL) H5Awrite(a, t.type, data_of(t));
}

hid_t add_dataset(hid_t group, const std::string& name, int type, int shape, const Value& v) {
  h5::Dataspace space = make_space(shape);
  Typed t = make_typed(type, points(space), v);
  hid_t d = H5Dcreate2(group, name.c_str(), t.type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (d >= 0 && points(space) > 0) H5Dwrite(d, t.type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data_of(t));
  return d;
}

void add_tensors(hid_t group, const H5Vocabulary& vocab, int perturb) {
  for (std::size_t i = 0; i < vocab.tensors.size(); ++i) {
    std::vector<hsize_t> dims = vocab.tensors[i].dims;
    if (perturb > 0 && std::size_t(perturb - 1) % vocab.tensors.size() == i) {
      const int how = (perturb - 1) / int(vocab.tensors.size()) % 3;
      if (how == 0 && !dims.empty())
        dims.pop_back();
      else if (how == 1)
        dims.push_back(1);
      else if (!dims.empty())
        ++dims.back();
    }
    hsize_t n = 1;
    for (hsize_t d : dims) n *= d;
    std::vector<float> zeros(n, 0.0f);
    h5::Dataspace space(dims.empty() ? H5Screate(H5S_SCALAR)
                                     : H5Screate_simple(int(dims.size()), dims.data(), nullptr));
    h5::Dataset d(
        H5Dcreate2(group, vocab.tensors[i].name.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (d.get() >= 0) H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data());
  }
}

}  // namespace

namespace {

void build_into(hid_t file, const std::uint8_t* program, std::size_t size, const H5Vocabulary& vocab) {
  const auto name = [&](std::uint8_t i) {
    return vocab.names.empty() ? std::string("x") : vocab.names[i % vocab.names.size()];
  };
  h5::Group current(H5Gopen2(file, "/", H5P_DEFAULT));
  h5::Dataset dataset;  // the current object when valid, else the current group
  Reader r{program, size};
  while (r.more()) {
    const int op = r.byte() % 8;
    const hid_t object = dataset.get() >= 0 ? dataset.get() : current.get();
    switch (op) {
      case 0: {
        h5::PropertyList gcpl(H5Pcreate(H5P_GROUP_CREATE));
        H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
        hid_t g = H5Gcreate2(file, name(r.byte()).c_str(), H5P_DEFAULT, gcpl, H5P_DEFAULT);
        if (g >= 0) {
          current = h5::Group(g);
          dataset.reset();
        }
        break;
      }
      case 1:
      case 6: {
        const std::string n = name(r.byte());
        const int t = r.byte(), s = r.byte();
        add_attribute(object, n, t, s, read_value(r, vocab, op == 6));
        break;
      }
      case 2:
      case 7: {
        const std::string n = name(r.byte());
        const int t = r.byte(), s = r.byte();
        hid_t d = add_dataset(current, n, t, s, read_value(r, vocab, op == 7));
        if (d >= 0) dataset = h5::Dataset(d);
        break;
      }
      case 3:
        current = h5::Group(H5Gopen2(file, "/", H5P_DEFAULT));
        dataset.reset();
        break;
      case 4:
        add_tensors(current, vocab, r.byte());
        break;
      case 5:
        dataset.reset();
        break;
    }
  }
}

bool write_bytes(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

bool build_h5_file(const std::string& path, const std::uint8_t* program, std::size_t size, const H5Vocabulary& vocab) {
  h5::quiet_errors();
  {
    h5::PropertyList fcpl = digest_file_creation();  // as scaleprobe's writers: room for the digest
    H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    h5::File file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT));
    if (file.get() < 0) return false;
    build_into(file, program, size, vocab);
  }
  // A valid digest: the reader goes past the check into the code the program is meant to reach.
  stamp_file_digest(path);
  return true;
}

bool restamp_mode() {
  static const bool on = [] {
    const char* v = std::getenv("SCALEPROBE_FUZZ_RESTAMP");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

bool write_h5_input(const std::string& path, const std::uint8_t* data, std::size_t size, const H5Vocabulary& vocab) {
  static constexpr char kDigestMagic[] = "scaleprobe-digest";
  const bool digest_image =
      size >= sizeof kDigestMagic - 1 && std::memcmp(data, kDigestMagic, sizeof kDigestMagic - 1) == 0;
  // An image of the older format (no digest): the readers read it in an isolated child, where a
  // libhdf5 crash is one error line in the parent (README.md).
  if (is_hdf5_image(data, size)) return write_bytes(path, data, size);
  if (!digest_image) return build_h5_file(path, data, size, vocab);
  if (!write_bytes(path, data, size)) return false;
  if (restamp_mode()) {
    try {
      stamp_file_digest(path);  // the mutated bytes under a matching digest, into libhdf5
    } catch (const sp::Error&) {
      // No HDF5 superblock after the block: the digest check refuses it as it is.
    }
  }
  return true;
}

void check_no_open_hdf5_objects(const char* reader) {
  const ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  if (n > 0) finding(std::string(reader) + " left " + std::to_string(n) + " HDF5 objects open");
}

}  // namespace sp::fuzz
