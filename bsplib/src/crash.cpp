#include "crash.hpp"

namespace bspg {

void install_crash_handlers() {}  // placeholder until implemented

}  // namespace bspg
