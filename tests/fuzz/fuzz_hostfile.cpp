// fuzz_hostfile.cpp - host files (bsprun --hostfile FILE: YAML or Open MPI's plain format)
// through parse_hostfile_text, the reader behind read_hostfile. A host file may come from anyone,
// and its values reach an ssh configuration, mpirun's command line and the terminal: any bytes
// must give hosts or a HostFileError, and the hosts it gives must make an ssh configuration
// (ssh_config_for refuses values read_hostfile promises never to give).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "hosts.h"
#include "untrusted.h"

using bspg::fuzz::expect;
namespace hosts = bspg::hosts;
namespace untrusted = bspg::untrusted;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<hosts::HostSpec> found;
  try {
    // A path under a directory that does not exist: relative paths in the file resolve there,
    // and nothing is read from the disk.
    found = hosts::parse_hostfile_text(bspg::fuzz::as_text(data, size), "/fuzz/hosts.yaml");
  } catch (const hosts::HostFileError& error) {
    expect(untrusted::control_character_problem(error.what()).empty(),
           "a host file's error message is one printable line");
    return 0;
  }
  expect(!found.empty(), "a host file that was read names a host");
  for (const hosts::HostSpec& host : found) {
    expect(untrusted::host_name_problem(host.name).empty(), "every host name has its form");
    expect(untrusted::address_problem(host.address).empty(), "every address has its form");
    expect(host.slots >= 0 && host.port >= 1 && host.port <= 65535, "slots and port in range");
  }
  try {
    hosts::ssh_config_for(found);
  } catch (const std::invalid_argument&) {
    expect(false, "ssh_config_for takes every host the reader gives");
  }
  return 0;
}
