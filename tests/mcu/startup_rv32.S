/* SPDX-License-Identifier: Apache-2.0 */
/* Start-up for the rv32 test board (qemu-system-riscv32 -M virt -bios none):
   QEMU jumps to the ELF entry in machine mode. Sets sp and gp, turns the FPU
   on (mstatus.FS = initial; a WARL field that stays 0 without F), installs a
   trap handler that exits 5, clears .bss, runs main and exits through
   semihosting with its status. */
  .option arch, +zicsr
  .section .text.start, "ax"
  .globl _start
_start:
  .option push
  .option norelax
  la gp, __global_pointer$
  .option pop
  la sp, __stack_top
  li t0, 0x2000
  csrs mstatus, t0
  la t0, trap_handler
  csrw mtvec, t0
  la t0, __bss_start
  la t1, __bss_end
1:
  bgeu t0, t1, 2f
  sw zero, 0(t0)
  addi t0, t0, 4
  j 1b
2:
  call main
  call semihost_exit

  .balign 4
trap_handler:
  la a0, trap_message
  call semihost_write0
  csrr a0, mcause
  li a0, 5
  call semihost_exit

  .section .rodata
trap_message:
  .asciz "harness: trap (illegal instruction or bad access)\n"
