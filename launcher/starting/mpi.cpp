// mpi.cpp - which MPI bsprun speaks to: the one bspg was configured with.
#include "mpi.h"

#include <memory>

#include "mpi_kinds.h"

#ifndef BSPG_MPI_ULFM
#error "BSPG_MPI_ULFM (0 or 1) is set by launcher/CMakeLists.txt from cmake/BspgMpi.cmake"
#endif
#ifndef BSPG_MPI_FAMILY
#error "BSPG_MPI_FAMILY (openmpi4, openmpi5 or mpich) is set by cmake/BspgMpi.cmake"
#endif

namespace bspg::launcher {
namespace {

constexpr MpiFamily kConfigured = MpiFamily::BSPG_MPI_FAMILY;

// The configured MPI's version and starter; the others, for tests, with a generic version.
std::string version_of(MpiFamily family, const char* generic) {
  return family == kConfigured ? BSPG_MPI_VERSION : generic;
}
std::string starter_of(MpiFamily family, const char* generic) {
  return family == kConfigured ? BSPG_MPI_STARTER : generic;
}

}  // namespace

const Mpi& mpi_of(MpiFamily family) {
  // The others, for tests, as Debian ships them: Open MPI 5 with ULFM, 4.1 without.
  static const std::unique_ptr<Mpi> four =
      make_open_mpi(false, version_of(MpiFamily::kOpenMpi4, "4.1"),
                    starter_of(MpiFamily::kOpenMpi4, "mpirun"), false);
  static const std::unique_ptr<Mpi> five = make_open_mpi(
      true, version_of(MpiFamily::kOpenMpi5, "5.0"), starter_of(MpiFamily::kOpenMpi5, "mpirun"),
      kConfigured == MpiFamily::kOpenMpi5 ? BSPG_MPI_ULFM != 0 : true);
  static const std::unique_ptr<Mpi> mpich =
      make_mpich(version_of(MpiFamily::kMpich, "4"), starter_of(MpiFamily::kMpich, "mpiexec"));
  switch (family) {
    case MpiFamily::kOpenMpi4:
      return *four;
    case MpiFamily::kOpenMpi5:
      return *five;
    case MpiFamily::kMpich:
      break;
  }
  return *mpich;
}

const Mpi& configured_mpi() { return mpi_of(kConfigured); }

}  // namespace bspg::launcher
