# BspgMpi.cmake - which MPI bspg is built with, and that MPI's own tools by their full names.
#
# BSPG_MPI chooses the MPI: "openmpi", "mpich", or empty for the system's default (the mpicc that
# PATH finds; on Debian the 'mpi' alternative). Debian installs several MPIs side by side, each
# tool under a suffixed name (mpicc.openmpi, mpiexec.mpich), so bspg uses those names: a program
# built with bspcc and started with bsprun then meets the MPI it was built for, whatever the
# alternatives point at. Sets, for the rest of the build:
#   BSPG_MPI_FAMILY   openmpi or mpich (MPICH's derivatives count as mpich)
#   BSPG_MPI_MAJOR    the implementation's major version (4, 5, ...)
#   BSPG_MPI_VERSION  its version, e.g. 4.1.4
#   BSPG_MPI_NAME     e.g. "Open MPI 4.1.4", for messages
#   BSPG_MPI_STARTER  the full path of its starter (mpirun for Open MPI, Hydra's mpiexec for MPICH)
#   BSPG_MPICC, BSPG_MPICXX  the full paths of its compiler wrappers
set(BSPG_MPI "" CACHE STRING "MPI to build against: openmpi, mpich, or empty for the system default")
set_property(CACHE BSPG_MPI PROPERTY STRINGS "" openmpi mpich)
if(BSPG_MPI AND NOT BSPG_MPI MATCHES "^(openmpi|mpich)$")
  message(FATAL_ERROR "BSPG_MPI='${BSPG_MPI}': choose openmpi, mpich, or leave it empty for the system default")
endif()

# A change of BSPG_MPI in an existing build directory: forget what FindMPI cached for the old one.
if(DEFINED CACHE{_BSPG_MPI_CONFIGURED} AND NOT "${_BSPG_MPI_CONFIGURED}" STREQUAL "${BSPG_MPI}")
  get_cmake_property(_cached CACHE_VARIABLES)
  foreach(_var IN LISTS _cached)
    if(_var MATCHES "^MPI(EXEC)?_")
      unset(${_var} CACHE)
    endif()
  endforeach()
endif()
set(_BSPG_MPI_CONFIGURED "${BSPG_MPI}" CACHE INTERNAL "BSPG_MPI the MPI cache entries belong to")

if(BSPG_MPI)
  find_program(_bspg_mpicc NAMES mpicc.${BSPG_MPI} NO_CACHE)
  find_program(_bspg_mpicxx NAMES mpicxx.${BSPG_MPI} mpic++.${BSPG_MPI} NO_CACHE)
  if(NOT _bspg_mpicc OR NOT _bspg_mpicxx)
    message(FATAL_ERROR "BSPG_MPI=${BSPG_MPI}: mpicc.${BSPG_MPI} and mpicxx.${BSPG_MPI} not found "
                        "(on Debian: apt-get install lib${BSPG_MPI}-dev)")
  endif()
  set(MPI_C_COMPILER ${_bspg_mpicc} CACHE FILEPATH "MPI C compiler wrapper" FORCE)
  set(MPI_CXX_COMPILER ${_bspg_mpicxx} CACHE FILEPATH "MPI C++ compiler wrapper" FORCE)
endif()

set(MPI_DETERMINE_LIBRARY_VERSION TRUE)
find_package(MPI REQUIRED COMPONENTS C CXX)

set(_bspg_libver "${MPI_C_LIBRARY_VERSION_STRING}")
if(_bspg_libver MATCHES "Open MPI v([0-9]+)\\.([0-9]+)\\.([0-9]+)")
  set(BSPG_MPI_FAMILY openmpi)
  set(BSPG_MPI_NAME "Open MPI")
elseif(_bspg_libver MATCHES "MPICH Version:[ \t]*([0-9]+)\\.([0-9]+)(\\.([0-9]+))?")
  set(BSPG_MPI_FAMILY mpich)
  set(BSPG_MPI_NAME "MPICH")
else()
  message(FATAL_ERROR "bspg supports Open MPI (4.1 and later) and MPICH (4 and later); the MPI found "
                      "(${MPI_C_COMPILER}) says it is '${_bspg_libver}'")
endif()
set(BSPG_MPI_MAJOR ${CMAKE_MATCH_1})
if(BSPG_MPI_FAMILY STREQUAL mpich)
  set(BSPG_MPI_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
else()
  set(BSPG_MPI_VERSION "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
endif()
if(BSPG_MPI_FAMILY STREQUAL openmpi AND BSPG_MPI_VERSION VERSION_LESS 4.1)
  message(FATAL_ERROR "bspg needs Open MPI 4.1 or later; ${MPI_C_COMPILER} is Open MPI ${BSPG_MPI_VERSION}")
endif()
if(BSPG_MPI_FAMILY STREQUAL mpich AND BSPG_MPI_MAJOR LESS 4)
  message(FATAL_ERROR "bspg needs MPICH 4 or later; ${MPI_C_COMPILER} is MPICH ${BSPG_MPI_VERSION}")
endif()
set(BSPG_MPI_NAME "${BSPG_MPI_NAME} ${BSPG_MPI_VERSION}")

# The wrappers and the starter by their own names, next to the wrapper FindMPI used.
get_filename_component(_bspg_mpi_bindir "${MPI_C_COMPILER}" DIRECTORY)
function(_bspg_mpi_tool var)
  find_program(_found NAMES ${ARGN} HINTS ${_bspg_mpi_bindir} NO_CACHE)
  if(NOT _found)
    message(FATAL_ERROR "${BSPG_MPI_NAME}: none of ${ARGN} found next to ${MPI_C_COMPILER}")
  endif()
  set(${var} ${_found} PARENT_SCOPE)
endfunction()
if(BSPG_MPI_FAMILY STREQUAL openmpi)
  _bspg_mpi_tool(BSPG_MPICC mpicc.openmpi mpicc)
  _bspg_mpi_tool(BSPG_MPICXX mpicxx.openmpi mpic++.openmpi mpicxx)
  _bspg_mpi_tool(BSPG_MPI_STARTER mpirun.openmpi mpirun)
else()
  _bspg_mpi_tool(BSPG_MPICC mpicc.mpich mpicc)
  _bspg_mpi_tool(BSPG_MPICXX mpicxx.mpich mpic++.mpich mpicxx)
  _bspg_mpi_tool(BSPG_MPI_STARTER mpiexec.mpich mpiexec.hydra mpiexec)
endif()

# What the library can use: MPI-4's persistent collectives, or Open MPI's extension of them.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_CXX)
set(CMAKE_REQUIRED_QUIET ON)
set(_bspg_allreduce_init [=[
#include <mpi.h>
@INCLUDE@
int main() {
  static unsigned long mine = 0, theirs = 0;
  MPI_Request request;
  return @CALL@(&mine, &theirs, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
}]=])
string(REPLACE "@INCLUDE@" "" _src "${_bspg_allreduce_init}")
string(REPLACE "@CALL@" "MPI_Allreduce_init" _src "${_src}")
if(BSPG_MPI_FAMILY STREQUAL mpich)
  # MPICH 4.0's persistent MPI_Allreduce fails its requests ("Fatal error in internal_Testall") from
  # p = 4 on: MPI_Iallreduce serves MPICH.
  unset(BSPG_HAVE_MPI_ALLREDUCE_INIT CACHE)
  set(BSPG_HAVE_MPI_ALLREDUCE_INIT FALSE)
else()
  check_cxx_source_compiles("${_src}" BSPG_HAVE_MPI_ALLREDUCE_INIT)
endif()
string(REPLACE "@INCLUDE@" "#include <mpi-ext.h>" _src "${_bspg_allreduce_init}")
string(REPLACE "@CALL@" "MPIX_Allreduce_init" _src "${_src}")
check_cxx_source_compiles("${_src}" BSPG_HAVE_MPIX_ALLREDUCE_INIT)
# ULFM, the MPI's own fault tolerance (recovery in place, bsprun --spares): Open MPI 5 built with
# it declares MPIX_Comm_revoke and MPIX_Comm_shrink in mpi-ext.h. MPICH 4.2 declares them in mpi.h
# too, but Debian's fails every MPI_Init with MPIR_CVAR_ENABLE_FT=1 and ends the job on a lost
# process without it (tests/recovery/FINDINGS.md): bspg does not use them there.
if(BSPG_MPI_FAMILY STREQUAL openmpi)
  check_cxx_source_compiles([=[
#include <mpi.h>
#include <mpi-ext.h>
int main() {
  MPI_Comm shrunk;
  int failed = MPIX_ERR_PROC_FAILED;
  MPIX_Comm_revoke(MPI_COMM_WORLD);
  return MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk) + failed;
}]=] BSPG_HAVE_ULFM)
else()
  set(BSPG_HAVE_ULFM FALSE)
endif()
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)

message(STATUS "bspg: built with ${BSPG_MPI_NAME} (${BSPG_MPI_FAMILY}); starter ${BSPG_MPI_STARTER}, "
               "wrappers ${BSPG_MPICC} ${BSPG_MPICXX}")
if(BSPG_HAVE_ULFM)
  message(STATUS "bspg: ${BSPG_MPI_NAME} has fault tolerance (ULFM): recovery in place")
endif()
