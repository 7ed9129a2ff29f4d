// The self-test of mpi_gtest_main's verdict (tests/mpi/skip_verdict.sh): one test that skips, one
// that fails only when SP_PLANT_FAILURE is set ("all": on every rank; "rank1": on rank 1 only), so
// the binary is harmless anywhere else. It is run only by that script, never as an entry itself.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <string>

#include "tests/lib/optional_part.hpp"

TEST(SkipVerdict, Skips) { SP_SKIP_OPTIONAL_PART("gpu", "the skip planted by tests/mpi/skip_verdict.sh"); }

TEST(SkipVerdict, PassesUnlessPlanted) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* plant = std::getenv("SP_PLANT_FAILURE");
  const std::string where = plant ? plant : "";
  EXPECT_FALSE(where == "all" || (where == "rank1" && rank == 1))
      << "planted failure (SP_PLANT_FAILURE=" << where << ")";
}
