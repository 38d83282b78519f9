// mcbsp.hpp - MulticoreBSP for C's C++ interface (its 1.x name; bsp.hpp is the 2.x one): the
// calls of mcbsp.h and the class mcbsp::BSP_program, over bspg.
//
// A program derives from BSP_program, implements spmd() (the SPMD part) and newInstance() (a new
// object of its own class, for another process to run spmd() on), and calls begin(P). In bspg
// every process runs main up to its first begin(P) (so every process builds its own object), and
// only process 0 after it; begin(P)
//   - starts the SPMD section, bsp_begin(P) (P above INT_MAX asks for every process available);
//   - runs spmd() on this object on process 0, and on newInstance() of this process's object on
//     every other process (MulticoreBSP: on the original object in its first thread, and on
//     newInstance() of it in every thread it spawns), so that what newInstance() copies comes
//     from an object that main built on that process;
//   - ends the section, bsp_end(), and destroys the instance with destroyInstance().
// begin() may be called again, on this object or another: the other processes wait between
// sections and run the next one on newInstance() of the object their own last begin() saw.
#ifndef BSPG_MCBSP_HPP
#define BSPG_MCBSP_HPP

#include "mcbsp.h"

namespace mcbsp {

class BSP_program {
 protected:
  BSP_program() {}

  // The SPMD part: runs between bsp_begin and bsp_end, on every process.
  virtual void spmd() = 0;

  // A new instance of the implementing class, for a process other than 0 to run spmd() on (it
  // need not copy this one). Must not return NULL.
  virtual BSP_program *newInstance() = 0;

  // Destroys an instance newInstance() made (MulticoreBSP 2.x).
  virtual void destroyInstance(BSP_program *const instance) { delete instance; }

 public:
  // Runs spmd() on min(P, available) processes: bsp_begin, spmd(), bsp_end.
  void begin(const MCBSP_PROCESSOR_INDEX_DATATYPE P = bsp_nprocs()) {
    current() = this;
    requested() = P;
    // The first section starts from main on every process; a later one is named to the others,
    // who wait between sections, as bsp_init names an SPMD part.
    if (sections_begun()++ > 0) bspg_mcbsp_name_section(&section);
    section();
  }

 private:
  static BSP_program *&current() {
    static BSP_program *program = 0;
    return program;
  }
  static MCBSP_PROCESSOR_INDEX_DATATYPE &requested() {
    static MCBSP_PROCESSOR_INDEX_DATATYPE P = 0;
    return P;
  }
  static unsigned &sections_begun() {
    static unsigned count = 0;
    return count;
  }

  static void section() {
    bsp_begin(requested());
    BSP_program *const program = current();
    BSP_program *const instance = bsp_pid() == 0 ? program : program->newInstance();
    if (instance == 0)
      bsp_abort("bspg: process %u: mcbsp::BSP_program::begin: newInstance() returned NULL\n",
                (unsigned int)bsp_pid());
    instance->spmd();
    bsp_end();
    if (instance != program) program->destroyInstance(instance);
  }

 public:
  virtual ~BSP_program() {}
};

}  // namespace mcbsp

#endif  // BSPG_MCBSP_HPP
