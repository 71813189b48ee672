// SPDX-License-Identifier: Apache-2.0
// Stack use of the generated code (LINKED: entry-abi-v3, docs/generated-api.md
// "Stack"): the bound the header publishes as NAME_STACK_SIZE and NAME_info
// holds as stack_size, computed from the stack buffers each emitter reports
// plus measured margins for what the compiler adds (spills, saved
// registers, small slots).
//
// On the Linux targets the bound is a pure function of the graph after
// passes and the same for every target: per node it takes the largest buffers any target mlcc
// supports (x86-64 with 32- or 64-byte vectors, aarch64, riscv64 with and
// without V) would allocate, looking at a Conv packed for the compiling
// target as the ONNX Conv it came from. The margins are measured at -O2
// (the default; -O1 and -O0 pack no weights, and the shared models' -O0
// frames also fit, but -O0 keeps every accumulator in memory and is not
// covered by construction). Microcontroller targets publish their own,
// smaller bound instead (mlcc_stack_size_for_target).
// Thread-safe (no state).
#ifndef MLCC_TARGETS_CODEGEN_STACK_H_
#define MLCC_TARGETS_CODEGEN_STACK_H_

#include <stdint.h>

#include "ir/graph.h"
#include "targets/target.h"

#ifdef __cplusplus
extern "C" {
#endif

// Bytes one kernel function may use beyond its stack buffers: saved
// registers, vector spills, the epilogues' lane slots, realignment and the
// return address. Measured over the shared models on every target (frames
// read from the objects' prologues, tests/e2e/stack_frames.py): at most
// 10.0 KiB (detector, AVX-512: spills of the Winograd output transform with
// the SiLU epilogue); riscv64 with V spills whole vector registers, 5.3 KiB
// of resnet18's 8.2 KiB gap at VLEN 256, so VLEN up to 512 fits.
#define MLCC_STACK_KERNEL_MARGIN 16384
// Bytes of the entry functions' own frames (NAME_run, NAME_run_parallel,
// NAME_task<k>, a kernel's range trampoline) beyond the parallel argument
// block; measured at most 720 bytes (x86 mobilenet_v2's NAME_run, counting
// every pushed call argument).
#define MLCC_STACK_ENTRY_MARGIN 1024

// The same for the bare-metal targets' own bound (mlcc_stack_size_for_target):
// their kernels have scalar or Helium code and no libm, and the frames
// measured on the qemu boards (tests/mcu/harness.c paints the stack) are at
// most 1.1 KiB beyond the buffers on cortex-m4, rv32 and rv32f (rv32's
// soft-float helpers included) and 0.6 KiB on cortex-m55 with its panels
// counted as buffers.
#define MLCC_STACK_MCU_KERNEL_MARGIN 2048
#define MLCC_STACK_MCU_ENTRY_MARGIN 512

// Bytes of the stack buffers the emitter of |node| allocates, the maximum
// over every target: Conv tile and Winograd panels (targets/kernels/conv.c,
// targets/kernels/conv_winograd.c), RNN/GRU/LSTM state rows (targets/kernels/rnn.c), Det's matrix
// (targets/kernels/spatial_misc.c), variadic elementwise pointer arrays
// (targets/kernels/elementwise.c); 0 for nodes that keep only scalars and vectors.
// Pure; never fails.
int64_t mlcc_stack_node_bytes(const mlcc_node_t* node);

// Upper bound on the stack one call of |kernel| (its function or its range
// variant) uses: the sum of its nodes' buffers plus MLCC_STACK_KERNEL_MARGIN.
int64_t mlcc_stack_kernel_bytes(const mlcc_kernel_t* kernel);

// NAME_STACK_SIZE of |graph| (after plan-memory): an upper bound on the
// bytes of stack one NAME_run / NAME_run_v call, and one task a
// NAME_run_parallel call hands to the parallel-for, needs beyond the
// caller's own frame (the parallel-for's own frame is the caller's):
// the entry's frame (MLCC_STACK_ENTRY_MARGIN plus the argument block of the
// widest parallel kernel) plus the largest mlcc_stack_kernel_bytes, rounded
// up to a multiple of 1024; graph->stack_size instead when it is set (a
// bare-metal target's own bound). Pure; never fails.
int64_t mlcc_stack_size(const mlcc_graph_t* graph);

// NAME_STACK_SIZE for |target|: on a bare-metal target (microcontrollers,
// docs/mcu.md) the target's own bound: per kernel the buffers the emitters
// allocate for that target only (no tile panels with scalar kernels;
// cortex-m55's Helium panels) plus MLCC_STACK_MCU_KERNEL_MARGIN, the entry's
// MLCC_STACK_MCU_ENTRY_MARGIN and 4-byte pointers, rounded up to a multiple
// of 256. On every other target (or a NULL |target|) mlcc_stack_size's
// target-independent bound, so Linux headers stay identical. The driver
// stores the result in graph->stack_size, which mlcc_stack_size then
// returns. Pure; never fails.
int64_t mlcc_stack_size_for_target(const mlcc_graph_t* graph, const mlcc_target_t* target);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_TARGETS_CODEGEN_STACK_H_
