#include "bsp.h"
#include <stdio.h>
int main(void){bsp_begin(bsp_nprocs());printf("hello from %d of %d\n",bsp_pid(),bsp_nprocs());bsp_end();return 0;}
