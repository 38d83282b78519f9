/* Every process pops an address it never registered (another one is registered).
 * Expected: "bsp_pop_reg: ... not registered", once. */
#include "misuse.h"

int main(void) {
  test_begin(bsp_nprocs());
  int area[4] = {0, 0, 0, 0}, other[4] = {0, 0, 0, 0};
  bsp_push_reg(area, (int)sizeof area);
  bsp_sync();
  bsp_pop_reg(other);
  bsp_sync();
  MISUSE_NOT_CAUGHT("bsp_pop_reg of an unregistered address was accepted");
}
