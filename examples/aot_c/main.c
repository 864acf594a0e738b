/* Runs a model compiled ahead of time by relayir, with no Python in the process.

   Export the model from Python first:
       lib = relayir.build(mod, target="cpu", params=params, executor="aot")
       lib.export_library("model.so")          # writes model.so and model.h
   then build and run this program (see README.md):
       make MODEL_DIR=path/to/model  &&  ./run_model input.bin output.bin [RUNS]

   input.bin holds every input, in order, as raw bytes in the model's dtypes and shapes
   (contiguous, row-major); output.bin gets every output the same way. With RUNS > 0 the
   program also times RUNS calls of relayir_run and prints the mean in microseconds. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "model.h"

static int fail(const char* what, const char* detail) {
  fprintf(stderr, "run_model: %s%s\n", what, detail ? detail : "");
  return 1;
}

/* One buffer per tensor, filled from (or, for outputs, sized for) the byte counts. */
static void** allocate(int32_t count, int64_t (*nbytes)(int32_t)) {
  void** buffers = calloc(count > 0 ? count : 1, sizeof(void*));
  for (int32_t i = 0; buffers && i < count; i++)
    if (!(buffers[i] = malloc(nbytes(i) > 0 ? nbytes(i) : 1))) return NULL;
  return buffers;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: run_model INPUT.bin OUTPUT.bin [RUNS]", NULL);
  int32_t n_in = relayir_num_inputs(), n_out = relayir_num_outputs();
  void** inputs = allocate(n_in, relayir_input_nbytes);
  void** outputs = allocate(n_out, relayir_output_nbytes);
  if (!inputs || !outputs) return fail("out of memory", NULL);

  FILE* in = fopen(argv[1], "rb");
  if (!in) return fail("cannot open ", argv[1]);
  for (int32_t i = 0; i < n_in; i++)
    if (fread(inputs[i], 1, relayir_input_nbytes(i), in) != (size_t)relayir_input_nbytes(i))
      return fail("input file too short for input ", relayir_input_name(i));
  if (fgetc(in) != EOF) return fail("input file longer than the model's inputs: ", argv[1]);
  fclose(in);

  if (relayir_run((const void* const*)inputs, outputs) != 0)
    return fail("relayir_run failed: ", relayir_last_error());

  FILE* out = fopen(argv[2], "wb");
  if (!out) return fail("cannot write ", argv[2]);
  for (int32_t i = 0; i < n_out; i++)
    fwrite(outputs[i], 1, relayir_output_nbytes(i), out);
  if (fclose(out) != 0) return fail("cannot write ", argv[2]);

  long runs = argc > 3 ? atol(argv[3]) : 0;
  if (runs > 0) {
    double start = seconds();
    for (long r = 0; r < runs; r++)
      if (relayir_run((const void* const*)inputs, outputs) != 0)
        return fail("relayir_run failed: ", relayir_last_error());
    printf("relayir_run: %.3f us per run (%ld runs)\n", 1e6 * (seconds() - start) / runs, runs);
  }
  return 0;
}
