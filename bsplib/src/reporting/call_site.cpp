#include "call_site.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <execinfo.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace bspg {
namespace {

// The few libdw calls used, found with dlsym: decltype only names their types, so libbspg does
// not link libdw (and its compression libraries) into every program's start.
struct Libdw {
  decltype(&dwfl_begin) begin = nullptr;
  decltype(&dwfl_linux_proc_report) proc_report = nullptr;
  decltype(&dwfl_report_end) report_end = nullptr;
  decltype(&dwfl_addrmodule) addrmodule = nullptr;
  decltype(&dwfl_module_addrname) addrname = nullptr;
  decltype(&dwfl_module_getsrc) getsrc = nullptr;
  decltype(&dwfl_lineinfo) lineinfo = nullptr;
  decltype(&dwfl_linux_proc_find_elf) find_elf = nullptr;
  decltype(&dwfl_standard_find_debuginfo) find_debuginfo = nullptr;
  Dwfl_Callbacks callbacks{};
  Dwfl* session = nullptr;  // this process's modules, reported once
};

template <typename F>
bool load(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  return function != nullptr;
}

// libdw with this process's modules reported, or nullptr where libdw is missing or fails.
Libdw* libdw() {
  static Libdw* loaded = []() -> Libdw* {
    void* library = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    auto dw = std::make_unique<Libdw>();
    if (!load(library, "dwfl_begin", dw->begin) ||
        !load(library, "dwfl_linux_proc_report", dw->proc_report) ||
        !load(library, "dwfl_report_end", dw->report_end) ||
        !load(library, "dwfl_addrmodule", dw->addrmodule) ||
        !load(library, "dwfl_module_addrname", dw->addrname) ||
        !load(library, "dwfl_module_getsrc", dw->getsrc) ||
        !load(library, "dwfl_lineinfo", dw->lineinfo) ||
        !load(library, "dwfl_linux_proc_find_elf", dw->find_elf) ||
        !load(library, "dwfl_standard_find_debuginfo", dw->find_debuginfo))
      return nullptr;
    dw->callbacks.find_elf = dw->find_elf;
    dw->callbacks.find_debuginfo = dw->find_debuginfo;
    dw->session = dw->begin(&dw->callbacks);
    if (dw->session == nullptr) return nullptr;
    if (dw->proc_report(dw->session, getpid()) != 0 ||
        dw->report_end(dw->session, nullptr, nullptr) != 0)
      return nullptr;
    return dw.release();
  }();
  return loaded;
}

// The base address of the object (program or library) that holds `address`, nullptr if none.
const void* object_of(const void* address) {
  Dl_info info{};
  return dladdr(address, &info) != 0 ? info.dli_fbase : nullptr;
}

bool is_bspg_header(const std::string& file) {
  const std::string name = file.substr(file.find_last_of('/') + 1);
  for (const char* header :
       {"bsp.h", "bspg.h", "bsp.hpp", "mcbsp.h", "mcbsp.hpp", "mcbsp-affinity.h", "bsp_level1.h"})
    if (name == header) return true;
  return false;
}

std::string readable_function(const char* symbol) {
  if (symbol == nullptr) return "";
  int status = 0;
  char* demangled = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled != nullptr ? demangled : symbol;
  std::free(demangled);
  return name;
}

std::string relative_to_working_directory(const std::string& file) {
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) == nullptr) return file;
  const std::string prefix = std::string(cwd) + "/";
  return file.compare(0, prefix.size(), prefix) == 0 ? file.substr(prefix.size()) : file;
}

// Where the call that returns to `return_address` was made: its file, line and function, or
// skip = true when that is inside one of bspg's headers (an inline wrapper: look further out).
std::string describe(const void* return_address, bool& skip) {
  skip = false;
  // The call instruction ends just before the return address.
  const Dwarf_Addr address = reinterpret_cast<Dwarf_Addr>(return_address) - 1;
  Libdw* dw = libdw();
  if (dw == nullptr) {
    Dl_info info{};  // without libdw: the function's name where the program exports it
    if (dladdr(return_address, &info) == 0 || info.dli_sname == nullptr) return "";
    return "in " + readable_function(info.dli_sname);
  }
  Dwfl_Module* module = dw->addrmodule(dw->session, address);
  if (module == nullptr) return "";
  const std::string function = readable_function(dw->addrname(module, address));
  int line = 0;
  const char* file = nullptr;
  if (Dwfl_Line* found = dw->getsrc(module, address); found != nullptr)
    file = dw->lineinfo(found, nullptr, &line, nullptr, nullptr, nullptr);
  if (file != nullptr && line > 0) {
    if (is_bspg_header(file)) {
      skip = true;
      return "";
    }
    return "at " + relative_to_working_directory(file) + ":" + std::to_string(line) +
           (function.empty() ? "" : " in " + function);
  }
  return function.empty() ? "" : "in " + function;
}

}  // namespace

std::string call_site_of(const void* return_address) {
  bool skip = false;
  const std::string site = describe(return_address, skip);
  return skip ? "" : site;
}

std::string user_call_site() {
  void* frames[64];
  const int depth = backtrace(frames, 64);
  const void* bspg = object_of(reinterpret_cast<const void*>(&user_call_site));
  const void* libc = object_of(reinterpret_cast<const void*>(&std::exit));
  for (int i = 1; i < depth; ++i) {
    const void* object = object_of(frames[i]);
    if (object == bspg) continue;
    // Called from the C library (an exit handler, a destructor at exit): no call of the program.
    if (object == nullptr || object == libc) return "";
    bool skip = false;
    const std::string site = describe(frames[i], skip);
    if (!skip) return site;
  }
  return "";
}

}  // namespace bspg
