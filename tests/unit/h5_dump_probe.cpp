// h5_dump_probe [--in-process | --mpi | --hang | --runaway] FILE: prints every attribute, group and dataset of an HDF5
// file (datasets as the hex of their native bytes, children in the order readers list them), read through the verified
// open (core/trace/h5_open.hpp: a file without a digest is read in an isolated child, which sends back a digested copy)
// or, with --in-process, in this process unprotected. undigested_reads.sh checks that the two print the same for stored
// undigested traces. --mpi: the verified open between MPI_Init and MPI_Finalize (the child forks after MPI_Init),
// printed by rank 0. --hang and
// --runaway: an isolated read that never ends (1 s limit) or allocates 1 GiB (64 MiB limit), which
// must end as one error.
#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/run/error.hpp"
#include "core/trace/h5_open.hpp"

namespace {

void dump_attributes(hid_t obj, const std::string& where, std::string& out) {
  for (const std::string& a : sp::h5::attribute_names(obj))
    out += fmt::format("{}@{} = {}\n", where, a, sp::h5::read_attribute_as_text(obj, a));
}

void dump(hid_t obj, const std::string& where, std::string& out) {
  dump_attributes(obj, where, out);
  for (const std::string& name : sp::h5::child_names(obj)) {  // the order readers see
    const std::string path = where + "/" + name;
    H5O_info_t info;
    sp::h5::check_status(H5Oget_info_by_name2(obj, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT), path.c_str());
    if (info.type == H5O_TYPE_GROUP) {
      sp::h5::Group g = sp::h5::open_group(obj, name);
      out += path + "/\n";
      dump(g, path, out);
      continue;
    }
    sp::h5::Dataset d(sp::h5::check(H5Dopen2(obj, name.c_str(), H5P_DEFAULT), path.c_str()));
    sp::h5::Datatype type(sp::h5::check(H5Dget_type(d), path.c_str()));
    sp::h5::Datatype native(sp::h5::check(H5Tget_native_type(type, H5T_DIR_ASCEND), path.c_str()));
    sp::h5::Dataspace space(sp::h5::check(H5Dget_space(d), path.c_str()));
    std::size_t n = 1;
    std::string shape;
    for (hsize_t e : sp::h5::dims_of(space, path)) n *= e, shape += fmt::format(" {}", e);
    std::vector<unsigned char> buf(n * H5Tget_size(native));
    if (!buf.empty()) sp::h5::read_dataset_data(d, native, buf.data(), path);
    out += fmt::format("{} class={} size={} shape={} checksum={} data=", path, int(H5Tget_class(type)),
                       H5Tget_size(type), shape, sp::h5::has_checksum(d));
    for (unsigned char b : buf) out += fmt::format("{:02x}", b);
    out += "\n";
    dump_attributes(d, path, out);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  const bool in_process = mode == "--in-process", mpi = mode == "--mpi";
  const bool hang = mode == "--hang", runaway = mode == "--runaway";
  if (argc != 2 && !in_process && !mpi && !hang && !runaway) {
    std::fprintf(stderr, "usage: h5_dump_probe [--in-process | --mpi | --hang | --runaway] FILE\n");
    return 2;
  }
  int rank = 0;
  if (mpi) MPI_Init(&argc, &argv), MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string path = argv[argc - 1];
  try {
    std::string out;
    if (in_process) {
      sp::h5::File f = sp::open_h5_in_process_for_tests(path);
      dump(f, "", out);
    } else {
      std::string discard;
      if (hang) sp::configure_isolated_reads({{1, 0}, nullptr});
      if (runaway) sp::configure_isolated_reads({{60, std::uint64_t{64} << 20}, nullptr});
      sp::OpenedH5 o = sp::open_h5_for_reading(path, [&](hid_t f) {
        while (hang) ::pause();
        if (runaway) discard.assign(std::size_t{1} << 30, 'x');
        dump(f, "", discard);
      });
      out += o.digest_verified ? "# digest verified\n" : "# no digest: read in isolation\n";
      dump(o.file, "", out);
    }
    if (rank == 0) std::fwrite(out.data(), 1, out.size(), stdout);
    if (mpi) std::fflush(stdout), MPI_Barrier(MPI_COMM_WORLD), MPI_Finalize();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "h5_dump_probe: error: %s: %s\n", path.c_str(), sp::one_line_message(e).c_str());
    if (mpi) MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
