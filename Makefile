# rooflab -- an educational GPU benchmark suite.   `make help` lists everything.
#
# One Makefile, GNU Make only. Builds a CUDA backend when nvcc is found and
# the CPU backend always. Objects and binaries go to $(B)/ (default build/).

.DEFAULT_GOAL := build
SHELL := /bin/bash
MAKEFLAGS += --no-builtin-rules
.SUFFIXES:

# ---- what a user sets ------------------------------------------------------
LABEL   ?=
BACKEND ?= auto
QUICK   ?=
FULL    ?=
SMS     ?= 75 80 86 89 90
ARGS    ?=
BUDGET  ?=
B       ?= build

NPROC := $(shell nproc 2>/dev/null || echo 2)

# ---- toolchain ---------------------------------------------------------------
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
CUDA_HOME := $(patsubst %/bin/nvcc,%,$(realpath $(NVCC)))
CUDA_LIBDIR := $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/targets/x86_64-linux/lib))
CPU_ARCH ?= -march=native
# sm_70 (V100) joins the default SMS where this nvcc builds it: CUDA 12 is
# the last major version that does (nvcc --list-gpu-arch lists compute_70),
# CUDA 13 dropped it. An SMS given on the command line or in the
# environment is kept as given.
ifeq ($(origin SMS),file)
  ifneq ($(NVCC),)
    ifneq ($(filter compute_70,$(shell $(NVCC) --list-gpu-arch 2>/dev/null)),)
      SMS := 70 $(SMS)
    endif
  endif
endif

# ---- bundle/: packages for a machine that cannot install them ----------------
# When bundle/ holds .deb files (make bundle) and something the build needs
# is missing, harness/ops/deps.sh unpacks them into $(B)/bundle-root (dpkg -x,
# nothing installed) and says so in one line; its folders then come after
# the system's: headers by -idirafter, libraries by -L and an rpath
# (DT_RPATH, which also serves the libraries' own dependencies), commands
# by PATH, .pc files by PKG_CONFIG_PATH. (check-gpu and gpu-day unpack it
# in their own build folder, build/smNN.)
NO_BUNDLE_GOALS := clean help bundle print-% check-gpu check-cuda12 gpu-day slurm test-slurm
ifneq ($(wildcard bundle/*.deb),)
  ifeq ($(MAKELEVEL),0)
    ifneq ($(or $(filter-out $(NO_BUNDLE_GOALS),$(MAKECMDGOALS)),$(if $(MAKECMDGOALS),,default)),)
      $(shell B='$(B)' harness/ops/deps.sh bundle >&2)
    endif
  endif
endif
-include $(B)/bundle-root/bundle.mk
PKG_CONFIG := pkg-config
ifneq ($(RL_BUNDLE_ROOT),)
  BUNDLE_LIBDIRS := $(wildcard $(RL_BUNDLE_ROOT)/usr/lib/$(RL_BUNDLE_MULTIARCH) \
                               $(RL_BUNDLE_ROOT)/usr/lib/$(RL_BUNDLE_MULTIARCH)/openblas-pthread)
  BUNDLE_CPPFLAGS := $(foreach d,usr/include usr/include/$(RL_BUNDLE_MULTIARCH),-idirafter $(RL_BUNDLE_ROOT)/$(d))
  BUNDLE_LDFLAGS := $(foreach d,$(BUNDLE_LIBDIRS),-L$(d) -Wl,-rpath,$(d)) -Wl,--disable-new-dtags
  export PATH := $(PATH):$(RL_BUNDLE_ROOT)/bin
  export PKG_CONFIG_PATH := $(RL_BUNDLE_ROOT)/usr/lib/$(RL_BUNDLE_MULTIARCH)/pkgconfig:$(RL_BUNDLE_ROOT)/usr/share/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
  # $(shell) does not see exported variables before GNU Make 4.4.
  PKG_CONFIG := PATH='$(PATH)' PKG_CONFIG_PATH='$(PKG_CONFIG_PATH)' pkg-config
endif

OPENBLAS_CFLAGS := $(shell $(PKG_CONFIG) --cflags openblas 2>/dev/null)
OPENBLAS_LIBS := $(or $(shell $(PKG_CONFIG) --libs openblas 2>/dev/null),-lopenblas)
CRITERION_LIBS := $(or $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null),-lcriterion)

WERROR := $(if $(filter true,$(CI)),-Werror)
CPPFLAGS := -D_GNU_SOURCE -Iharness -Ikernels -DRL_SOURCE_ROOT='"$(CURDIR)"' $(OPENBLAS_CFLAGS)
# The bundle's headers serve C files only (nvcc has no -idirafter, and the
# .cu files need none of them).
# -Wno-psabi: without AVX, GCC notes that a 32-byte vector argument would
# pass differently under AVX; ours are static inline helpers (kernels/cpu/
# simd.h) and never cross a library's ABI, so the note does not apply, and
# a portable build (CPU_ARCH=-march=x86-64) must build under -Werror too.
CFLAGS := -std=c11 -O3 -g $(CPU_ARCH) -fopenmp -Wall -Wextra -Wno-psabi $(WERROR) -MMD -MP $(BUNDLE_CPPFLAGS)
LDLIBS := $(BUNDLE_LDFLAGS) $(OPENBLAS_LIBS) -lm -ldl -lpthread
# The rooflab command reads results and runs nothing: it links neither
# OpenBLAS nor CUDA, whose libraries (cuBLAS: hundreds of MB) would cost
# every one of its calls a tenth of a second to load; scripts call it often.
TOOL_LDLIBS := $(BUNDLE_LDFLAGS) -lm -ldl -lpthread

# The layers, each a library (README, Layout): the measurement core
# (harness/, with the probes of harness/probes/), the report layer that
# reads results back (harness/report/: charts; its tools/ the rooflab
# command), the kernels. Nothing in the core calls the report layer.
HARNESS_C := $(wildcard harness/*.c harness/probes/*.c)
REPORT_C := $(wildcard harness/report/*.c)
KERNELS_C := $(wildcard kernels/*.c kernels/cpu/*.c kernels/ref/*.c)

ifneq ($(NVCC),)
  # Numerically: a text sort puts 100 before 90 and would embed compute_90 PTX.
  NEWEST_SM := $(shell printf '%s\n' $(SMS) | sort -n | tail -n 1)
  GENCODE := $(foreach sm,$(SMS),-gencode arch=compute_$(sm),code=sm_$(sm)) \
             -gencode arch=compute_$(NEWEST_SM),code=compute_$(NEWEST_SM)
  CPPFLAGS += -DRL_HAVE_CUDA=1
  # --resource-usage: ptxas reports each kernel's registers, spills and
  # shared memory (harness/ops/nvcc_res.sh keeps them for kernel-resources.txt).
  NVFLAGS := -std=c++17 -O3 -g -lineinfo $(GENCODE) -MMD -MP --resource-usage \
             -Xcompiler -Wall,-Wextra $(if $(WERROR),-Werror all-warnings -Xcompiler -Werror)
  HARNESS_C := $(filter-out harness/backend_nocuda.c harness/kernel_resources_none.c,$(HARNESS_C))
  HARNESS_CU := $(wildcard harness/*.cu)
  KERNELS_CU := $(wildcard kernels/*.cu)
  KERNEL_RESOURCES_C := $(B)/gen/kernel_resources.c
  # cuBLAS is not linked: harness/cublas_loader.cu opens it at its first
  # call, through this run path (linked, it was most of every start-up).
  LDLIBS += -L$(CUDA_LIBDIR) -Wl,-rpath,$(CUDA_LIBDIR) -lcudart_static -lrt -lstdc++
else ifeq ($(MAKELEVEL),0)
  $(info rooflab: nvcc not found: building the CPU backend only (CUDA backend, kernels and GPU tests skipped))
endif

# Objects keep their source's extension: kernels/gemv.c (the table) and
# kernels/gemv.cu (the CUDA launchers) are two objects.
obj = $(patsubst %,$(B)/obj/%.o,$(1))
# The objects, then the libraries as one group: the kernels' checks call
# the harness (check.h) and the harness's decode tuner calls the kernels
# (harness/tune_decode.c), so no one order of the archives resolves both.
link_objects = $(filter-out %.a,$(1)) -Wl,--start-group $(filter %.a,$(1)) -Wl,--end-group

HARNESS_LIB := $(B)/librooflab.a
REPORT_LIB := $(B)/libreport.a
KERNELS_LIB := $(B)/libkernels.a
EXPERIMENTS := $(patsubst experiments/%/main.c,%,$(wildcard experiments/*/main.c))
exp_id = $(firstword $(subst -, ,$(1)))
EXP_BINS := $(foreach e,$(EXPERIMENTS),$(B)/exp-$(call exp_id,$(e)))
TEST_BIN := $(B)/tests/rooflab-tests

REFERENCE ?=
EXP ?=
RUNS ?=
MODE ?=
SPIN ?=
TOOL_BIN := $(B)/rooflab

QUICK_FLAG := $(if $(filter-out 0 no false,$(QUICK)),--quick)
FULL_FLAG := $(if $(filter-out 0 no false,$(FULL)),--full)
# Flags for every experiment binary; LABEL is added where it is known.
BASEFLAGS = --backend $(BACKEND) $(QUICK_FLAG) $(FULL_FLAG) $(if $(REFERENCE),--reference $(REFERENCE)) $(ARGS)
RUNFLAGS = $(BASEFLAGS) $(if $(BUDGET),--budget $(BUDGET)) $(if $(LABEL),--label $(LABEL))
# In a recipe: the label runs use, LABEL or else the device's slug.
SHELL_LABEL = $(if $(LABEL),$(LABEL),$$($(firstword $(EXP_BINS)) --print-label --backend $(BACKEND)))

# ---- compiling ---------------------------------------------------------------
# Objects depend on a stamp of the flags, so changing SMS or CI rebuilds.
CONFIG := $(CC) $(CPPFLAGS) $(CFLAGS) | $(NVCC) $(NVFLAGS) | $(LDLIBS)
$(B)/config.stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(CONFIG)' | cmp -s - $@ 2>/dev/null || echo '$(CONFIG)' > $@

$(B)/obj/%.c.o: %.c $(B)/config.stamp
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# Each CUDA object keeps what ptxas gave its kernels beside it ($@.res).
$(B)/obj/%.cu.o: %.cu $(B)/config.stamp harness/ops/nvcc_res.sh
	@mkdir -p $(@D)
	harness/ops/nvcc_res.sh $@.res $(NVCC) $(CPPFLAGS) $(NVFLAGS) -c $< -o $@

# The record of the CUDA kernels, after their objects: every kernel's
# registers, spills, shared memory and launch bounds per SM built, and the
# blocks of its bound an SM holds (rl_occupancy_of), printed in the build's
# log and compiled into the harness (a run's kernel_resources_* header
# lines). Its two files are made together (one pattern rule, one stem).
KERNEL_RESOURCES_TOOL := $(B)/kernel-resources
CU_OBJS := $(call obj,$(KERNELS_CU) $(HARNESS_CU))
$(KERNEL_RESOURCES_TOOL): harness/ops/kernel_resources.c harness/occupancy.c harness/rl_occupancy.h
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra $(WERROR) -D_GNU_SOURCE -Iharness -Ikernels harness/ops/kernel_resources.c harness/occupancy.c -o $@ -lm

$(B)/kernel-resources%txt $(B)/gen/kernel_resources%c: $(CU_OBJS) $(KERNEL_RESOURCES_TOOL)
	@mkdir -p $(B)/gen
	@$(KERNEL_RESOURCES_TOOL) --obj $(B)/obj --txt $(B)/kernel-resources.txt --c $(B)/gen/kernel_resources.c \
	    --nvcc "nvcc $$($(NVCC) --version | sed -n 's/.*release //p')" $(addsuffix .res,$(CU_OBJS))
	@echo "rooflab: the CUDA kernels as built ($(B)/kernel-resources.txt):"; cat $(B)/kernel-resources.txt

# make gpu-model's program: the judged kernels' SASS and ptxas records
# against published GPU figures (harness/ops/gpu-model.sh; no GPU needed).
# It links the kernels for their launch plans (moe_grid, spill_schedule, ...),
# the host arithmetic their launchers use.
GPU_MODEL_TOOL := $(B)/gpu-model-tool
$(GPU_MODEL_TOOL): $(call obj,harness/ops/gpu_model.c harness/ops/gpu_model_cases.c harness/ops/gpu_model_spill.c) $(KERNELS_LIB) $(HARNESS_LIB)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# Made by a pattern rule on the way to its object, it would be deleted as
# an intermediate file.
.SECONDARY: $(KERNEL_RESOURCES_C) $(if $(KERNEL_RESOURCES_C),$(B)/kernel-resources.txt)

$(HARNESS_LIB): $(call obj,$(HARNESS_C) $(HARNESS_CU) $(KERNEL_RESOURCES_C))
	@rm -f $@
	ar rcs $@ $^

$(REPORT_LIB): $(call obj,$(REPORT_C))
	@rm -f $@
	ar rcs $@ $^

$(KERNELS_LIB): $(call obj,$(KERNELS_C) $(KERNELS_CU))
	@rm -f $@
	ar rcs $@ $^

# A program that draws charts needs the rooflab command beside it: the
# plot scripts read their CSVs through `rooflab query` (harness/report/plot.c).
define experiment_rules
$(B)/exp-$(call exp_id,$(1)): $(call obj,$(wildcard experiments/$(1)/*.c)) $(KERNELS_LIB) $(REPORT_LIB) $(HARNESS_LIB) | $(TOOL_BIN)
	$$(CC) $$(CFLAGS) $$(call link_objects,$$^) -o $$@ $$(LDLIBS)
endef
$(foreach e,$(EXPERIMENTS),$(eval $(call experiment_rules,$(e))))

$(TOOL_BIN): $(call obj,$(wildcard harness/report/tools/*.c)) $(REPORT_LIB) $(HARNESS_LIB)
	$(CC) $(CFLAGS) $^ -o $@ $(TOOL_LDLIBS)

# make mountain's program: it measures (the ceilings, through the core) and
# draws (the report layer), so it links both, and the backends.
MOUNTAIN_BIN := $(B)/mountain
$(MOUNTAIN_BIN): $(call obj,harness/report/mountain/main.c) $(REPORT_LIB) $(HARNESS_LIB) $(KERNELS_LIB) | $(TOOL_BIN)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

# The probe check-gpu runs before building: C only (no nvcc), libcuda and
# NVML through dlopen, the diagnosis of harness/diagnose.c.
PROBE_BIN := $(B)/cuda-probe
PROBE_SRC := harness/ops/cuda_probe.c harness/diagnose.c harness/gpu_facts.c harness/probes/nvml.c
$(PROBE_BIN): $(PROBE_SRC) harness/internal.h $(wildcard harness/*.h harness/probes/*.h)
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -g -Wall -Wextra $(WERROR) -D_GNU_SOURCE -Iharness -Ikernels $(PROBE_SRC) -o $@ -ldl

$(TEST_BIN): $(call obj,$(wildcard tests/*.c)) $(KERNELS_LIB) $(REPORT_LIB) $(HARNESS_LIB) | $(TOOL_BIN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(call link_objects,$^) -o $@ $(CRITERION_LIBS) $(LDLIBS)

# End-to-end tests run the experiment binaries from here.
$(call obj,$(wildcard tests/*.c)): CPPFLAGS += -DRL_BUILD_DIR='"$(abspath $(B))"'
# The 8-lane vector code (the cos, exp-09's row helpers) exactly as an AVX2 machine builds it, also on an
# AVX-512 one (whose own build takes 16 lanes).
$(call obj,tests/test_vmath_8_lanes.c tests/test_layer_8_lanes.c): CFLAGS += -mno-avx512f

# make test-emu's program: the CUDA kernels' device code (kernels/*.cuh, the
# text nvcc compiles) built by g++ against tests/emu/cuda_shim.h and run on a
# CPU emulator of warps, barriers and the PTX they use, each kernel against
# its CPU reference (tests/README.md). -fno-extern-tls-init: a kernel's
# extern __shared__ array is an extern thread_local there. EMU_SANITIZE=
# (empty) builds it without the sanitizers.
EMU_BIN := $(B)/emu/rooflab-emu
EMU_OBJS := $(patsubst %,$(B)/obj/%.o,$(wildcard tests/emu/*.cpp))
EMU_SANITIZE ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
EMU_CXXFLAGS := -std=c++17 -O1 -g -Wall -Wextra -Wno-unknown-pragmas $(WERROR) -MMD -MP -DRL_EMULATOR -fno-extern-tls-init $(EMU_SANITIZE)
$(B)/emu/flags.stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(CXX) $(EMU_CXXFLAGS)' | cmp -s - $@ 2>/dev/null || echo '$(CXX) $(EMU_CXXFLAGS)' > $@
$(B)/obj/tests/emu/%.cpp.o: tests/emu/%.cpp $(B)/emu/flags.stamp
	@mkdir -p $(@D)
	$(CXX) $(EMU_CXXFLAGS) -D_GNU_SOURCE -Itests/emu -Iharness -Ikernels -c $< -o $@
$(EMU_BIN): $(EMU_OBJS) $(KERNELS_LIB) $(HARNESS_LIB)
	$(CXX) $(EMU_CXXFLAGS) $^ -o $@ -fopenmp $(LDLIBS)

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

# ---- what a user types -----------------------------------------------------------
.PHONY: gpu-model peer-ggml peer-ggml-batch peer-ggml-attention peer-ggml-moe peer-torch-layer cpu-loops ab-decode build build-tests test deps check-gpu check-cuda12 gpu-day bundle slurm test-slurm test-add-variant readme-tables sass all compare stability redraw-check reference paper mountain clean help FORCE
FORCE:

build: $(EXP_BINS) $(TOOL_BIN) $(PROBE_BIN) $(MOUNTAIN_BIN) $(if $(NVCC),$(B)/kernel-resources.txt $(GPU_MODEL_TOOL))

build-tests: build $(TEST_BIN)

deps:
	@B='$(B)' harness/ops/deps.sh all

# Each experiment: check the packages, build what is stale, run, draw.
define run_rules
.PHONY: exp-$(call exp_id,$(1)) plot-$(call exp_id,$(1))
exp-$(call exp_id,$(1)):
	@B='$(B)' harness/ops/deps.sh run
	@$$(MAKE) --no-print-directory $(B)/exp-$(call exp_id,$(1))
	$(B)/exp-$(call exp_id,$(1)) $$(RUNFLAGS)

plot-$(call exp_id,$(1)):
	@$$(MAKE) --no-print-directory $(B)/exp-$(call exp_id,$(1))
	$(B)/exp-$(call exp_id,$(1)) --plot-only $$(RUNFLAGS)
endef
$(foreach e,$(EXPERIMENTS),$(eval $(call run_rules,$(e))))

# Every experiment under one label, then the summary of their verdicts
# (harness/ops/run-all.sh; BUDGET= is split across the experiments). A
# failed experiment does not stop the others; make reports it at the end.
all:
	@B='$(B)' harness/ops/deps.sh run
	@$(MAKE) --no-print-directory build
	@label=$(SHELL_LABEL) || exit $$?; \
	B='$(B)' LABEL="$$label" FLAGS='$(BASEFLAGS)' BUDGET='$(BUDGET)' EXPS='$(EXPS)' harness/ops/run-all.sh

# Experiment 03's CPU decode beside ggml's test-backend-ops, on this machine
# (harness/ops/peer-ggml.sh --help: GGML_SRC, GGML_COMMIT, ROUNDS, MATRIX).
peer-ggml:
	@$(MAKE) --no-print-directory build
	@B='$(B)' LABEL='$(LABEL)' harness/ops/peer-ggml.sh

# Experiment 03's CPU batch kernels (one matrix, M tokens a call) beside
# ggml's MUL_MAT at the same M (harness/ops/peer-ggml-batch.sh --help:
# TOKENS, FORMATS, MATRIX, ROUNDS, GGML_SRC).
peer-ggml-batch:
	@$(MAKE) --no-print-directory build
	@B='$(B)' LABEL='$(LABEL)' harness/ops/peer-ggml-batch.sh

# Experiment 07's CPU decode attention beside ggml's FLASH_ATTN_EXT
# (harness/ops/peer-ggml-attention.sh --help: SHAPES, ROUNDS, GGML_SRC).
peer-ggml-attention:
	@$(MAKE) --no-print-directory build
	@B='$(B)' LABEL='$(LABEL)' harness/ops/peer-ggml-attention.sh

# Experiment 08's CPU MoE layer beside ggml's MUL_MAT_ID
# (harness/ops/peer-ggml-moe.sh --help: SHAPES, ROUNDS, GGML_SRC).
peer-ggml-moe:
	@$(MAKE) --no-print-directory build
	@B='$(B)' LABEL='$(LABEL)' harness/ops/peer-ggml-moe.sh

# Experiment 09's layer in PyTorch, FP32 on the CPU, eager and torch.compile:
# its time by class of step. Optional: it installs torch into a virtual
# environment of its own, $(B)/peer/torch-venv (harness/ops/peer-torch-layer.sh
# --help: BATCH, SEQ, CONFIGS, MODES, RUNS, OUT, TORCH_VENV, TORCH_WHEEL).
peer-torch-layer:
	@B='$(B)' harness/ops/peer-torch-layer.sh

# The read bandwidth over footprints and the knees found on it, against the
# reported cache sizes: the ceilings' curve, reused or measured (a minute).
mountain:
	@B='$(B)' harness/ops/deps.sh run
	@$(MAKE) --no-print-directory $(MOUNTAIN_BIN)
	$(MOUNTAIN_BIN) --backend $(BACKEND) $(QUICK_FLAG) $(FULL_FLAG) $(if $(LABEL),--label $(LABEL)) $(ARGS)

compare:
	@[ -n "$(EXP)" ] && [ -n "$(RUNS)" ] || \
	    { echo 'usage: make compare EXP=NN RUNS="label label ..." (the first is the baseline)'; exit 2; }
	@$(MAKE) --no-print-directory $(TOOL_BIN)
	$(TOOL_BIN) compare --exp $(EXP) $(if $(RATIOS_FILE),--ratios-file '$(RATIOS_FILE)') $(RUNS)

# One experiment RUNS times back to back (harness/ops/stability.sh), then
# rooflab stability on the runs: does a verdict stay the same a minute
# later? RUNS here is a count (for compare it is labels); LABEL the runs'
# prefix (labels LABEL/1 .. LABEL/N).
EXP_IDS := $(foreach e,$(EXPERIMENTS),$(call exp_id,$(e)))
stability:
	@[ -n "$(filter $(EXP),$(EXP_IDS))" ] || \
	    { echo 'usage: make stability EXP=NN [RUNS=3] [MODE=lab|quick] [BUDGET=S] [LABEL=prefix] [SPIN=1] (NN: $(EXP_IDS))'; exit 2; }
	@B='$(B)' harness/ops/deps.sh run
	@$(MAKE) --no-print-directory $(B)/exp-$(EXP) $(TOOL_BIN)
	@B='$(B)' EXP='$(EXP)' RUNS='$(RUNS)' MODE='$(MODE)' PREFIX='$(LABEL)' SPIN='$(SPIN)' BUDGET='$(BUDGET)' \
	BACKEND='$(BACKEND)' ARGS='$(ARGS)' harness/ops/stability.sh

# Every reference chart redrawn from its CSV by this build, compared byte
# for byte with the committed one (harness/ops/redraw-check.sh).
redraw-check: build
	@B='$(B)' harness/ops/redraw-check.sh

# Full sweeps of every experiment into results/reference/<device-slug>/.
reference:
	@[ -z "$(QUICK_FLAG)" ] || { echo 'make reference runs the full sweeps: drop QUICK'; exit 2; }
	@[ -z "$(LABEL)" ] || { echo 'make reference chooses its label (reference/<device>): drop LABEL'; exit 2; }
	@B='$(B)' harness/ops/deps.sh run
	@$(MAKE) --no-print-directory build
	@slug=$$($(firstword $(EXP_BINS)) --print-label --backend $(BACKEND)) || exit $$?; \
	$(MAKE) --no-print-directory all LABEL="reference/$$slug" REFERENCE=none FULL=1

# The paper reads results only: with LABEL given, only the rooflab tool is
# built (without it, an experiment binary names this machine's label).
paper:
	@B='$(B)' harness/ops/deps.sh paper
	@$(MAKE) --no-print-directory $(if $(LABEL),$(TOOL_BIN),build)
	@label=$(SHELL_LABEL) || exit $$?; \
	ROOFLAB=$(TOOL_BIN) paper/build.sh "$$label" results plots $(B)/paper && \
	cp $(B)/paper/paper.pdf paper/paper.pdf && echo "wrote paper/paper.pdf (label $$label)"

# The build on every core: nvcc's fat binary is most of a fresh clone's test time.
test:
	@B='$(B)' harness/ops/deps.sh test
	@$(MAKE) --no-print-directory -j$(NPROC) build-tests
	$(TEST_BIN) $(TESTFLAGS)

check-gpu:
	@MAKE="$(MAKE)" NVCC="$(NVCC)" LABEL="$(LABEL)" tests/check-gpu.sh

# The CUDA code against a CUDA 12 toolkit, on a machine without one: PyPI's
# CUDA 12 wheels and clang-19 in CUDA mode standing in for nvcc, the build
# in $(B)/cuda12/ (harness/ops/cuda12-check.sh --help: what it proves and
# what not). CUDA12=12.x picks the wheels (default 12.3); SMS is its own
# (default 70 75 80 90) unless given.
check-cuda12:
	@B='$(B)' harness/ops/deps.sh run
	@B='$(B)' MAKE='$(MAKE)' CUDA12='$(CUDA12)' SMS='$(call given,SMS)' harness/ops/cuda12-check.sh

# One command for a GPU lent for ten minutes: check-gpu, every experiment
# in lab mode under a budget from the time left, and a tarball of
# results/, plots/ and the logs in OUT, rewritten after each experiment.
# Its variables (GPU_DAY_BUDGET_S, GPU_DAY_EXPS, ...) come from the
# environment or this command line: tests/gpu-day.sh --help.
gpu-day:
	@[ -n "$(OUT)" ] || { echo 'usage: make gpu-day OUT=folder (where the tarball goes)'; exit 2; }
	@MAKE="$(MAKE)" NVCC="$(NVCC)" OUT="$(OUT)" tests/gpu-day.sh

# The .deb files a GPU machine without package access needs (see harness/ops/bundle.sh).
bundle:
	@harness/ops/bundle.sh download bundle

# On a Slurm cluster: a job array per partition, a task per experiment,
# then the summary and the comparison across the GPUs (harness/ops/slurm/).
# SMS and B count as given only when the user gave them.
given = $(if $(filter command environment,$(origin $(1))),$($(1)))
slurm:
	@[ -z "$(LABEL)" ] || { echo 'make slurm: labels are PREFIX/<device>, one per GPU type: set PREFIX, not LABEL'; exit 2; }
	@PARTITIONS='$(PARTITIONS)' EXPS='$(EXPS)' QUICK='$(QUICK_FLAG)' BACKEND='$(BACKEND)' \
	PREFIX='$(PREFIX)' SMS='$(call given,SMS)' SMS_DEFAULT='$(SMS)' B='$(call given,B)' \
	NVCC='$(NVCC)' MAKE='$(MAKE)' SBATCH_ARGS='$(SBATCH_ARGS)' GRES='$(GRES)' \
	TIME_LIMIT='$(TIME_LIMIT)' CPUS='$(CPUS)' FINISH_PARTITION='$(FINISH_PARTITION)' \
	REFERENCE='$(REFERENCE)' ARGS='$(ARGS)' SKIP_BUILD='$(SKIP_BUILD)' harness/ops/slurm/submit.sh

# Each experiment README's Results section and its lab sheet's run times,
# from the reference runs' summary.md and CSV headers (a test checks they
# agree).
readme-tables:
	@$(MAKE) --no-print-directory $(TOOL_BIN)
	@ROOFLAB=$(TOOL_BIN) harness/report/readme-tables.sh $(if $(LABEL),$(LABEL))

# The machine code of the CUDA kernels matching KERNEL, for SM (default
# 90), from the build's objects: registers and each loop's instructions
# (no GPU needed; cuobjdump comes from PyPI when the toolkit lacks it).
SM ?= 90
sass: build
	@[ -n "$(KERNEL)" ] || { echo 'usage: make sass KERNEL=pattern [SM=90]  (e.g. KERNEL=gemv_dp4a)'; exit 2; }
	@B='$(B)' NVCC='$(NVCC)' harness/ops/sass.sh '$(KERNEL)' '$(SM)'

# Every CUDA kernel a verdict judges, by its own count, on the GPUs of
# the model whose SM is in MODEL_SMS (default 80 90): registers,
# occupancy, bytes in flight, SASS instructions per byte, the predicted
# fraction of the roof against the verdict's bar (kernels/README.md):
# results/<LABEL, default gpu-model>/gpu-model.csv and its chart. No GPU
# needed; exit 1 when a kernel is predicted below its bar on H100 or H200.
MODEL_SMS ?= 80 90
gpu-model:
	@[ -n "$(NVCC)" ] || { echo 'make gpu-model reads the CUDA build: no nvcc here'; exit 2; }
	@$(MAKE) --no-print-directory $(CU_OBJS) $(GPU_MODEL_TOOL) $(TOOL_BIN)
	@B='$(B)' SMS='$(MODEL_SMS)' LABEL='$(or $(LABEL),gpu-model)' GPUS='$(GPUS)' NVCC='$(NVCC)' ARGS='$(ARGS)' \
	    harness/ops/gpu-model.sh

# The loops of a CPU kernel file as compiled for MARCH (default native: any
# x86 -march, no such CPU needed): each arithmetic loop's instructions,
# prefetches and multiply-adds (harness/ops/cpu-loops.sh --help).
cpu-loops:
	@harness/ops/cpu-loops.sh '$(or $(FILE),kernels/cpu/quant_dot_avx2.c)' '$(or $(FUNC),rows_simd_q.*_1)' '$(or $(MARCH),native)'

# This tree's CPU decode kernels (quant_dot_avx2.c, gemv.c) against the
# same files at REV (default HEAD), in one process, call by call
# (harness/ops/ab-decode.sh --help).
ab-decode:
	@REV='$(or $(REV),HEAD)' OLD='$(OLD)' MATRIX='$(or $(MATRIX),1024x4096)' ROUNDS='$(or $(ROUNDS),200)' TOKENS='$(or $(TOKENS),1)' SHAPE='$(SHAPE)' F16_ROWS='$(F16_ROWS)' CPU_ARCH='$(CPU_ARCH)' \
	    OPENBLAS_CFLAGS='$(OPENBLAS_CFLAGS)' OPENBLAS_LIBS='$(OPENBLAS_LIBS)' harness/ops/ab-decode.sh

# The CUDA kernels on the CPU emulator (tests/emu/): each against its CPU
# reference, no GPU needed; exit 1 when one fails (CI runs it).
.PHONY: test-emu
test-emu:
	@B='$(B)' harness/ops/deps.sh run
	@$(MAKE) --no-print-directory -j$(NPROC) $(EMU_BIN)
	$(EMU_BIN)

# The README's "Adding a kernel variant", done in a scratch copy: a row is
# validated, timed, written and drawn (a CPU build of its own: a minute),
# then, where nvcc exists, built with CUDA for one SM (minutes more).
test-add-variant:
	@tests/add-variant.sh

# A one-node Slurm cluster here (root), make slurm on it, and checks: not
# part of make test (root, minutes).
test-slurm:
	@MAKE='$(MAKE)' tests/test-slurm.sh

# For scripts and tests: the value of a variable, e.g. make print-GENCODE SMS="90 100".
print-%:
	@echo '$($*)'

clean:
	rm -rf $(B)

help:
	@echo 'rooflab: numbered experiments that reproduce claims about GPU performance.'
	@echo
	@echo 'Targets'
	@echo '  make exp-NN        build, run experiment NN (GPU if present, else CPU), write'
	@echo '                     results/<label>/exp-NN.csv and plots/<label>/exp-NN.{png,pdf,svg}'
	@echo '                     experiments here: $(foreach e,$(EXPERIMENTS),$(call exp_id,$(e)))'
	@echo '  make plot-NN       redraw experiment NN'"'"'s charts from its CSV'
	@echo '  make all           run every experiment, then print and write the summary of'
	@echo '                     their verdicts (results/<label>/summary.md); a lab series keeps'
	@echo '                     to 590 s, each experiment a --slot of it (at most 105 s)'
	@echo '  make compare EXP=NN RUNS="reference/<device> mine"'
	@echo '                     overlay the runs'"'"' charts (plots/compare/...) and print'
	@echo '                     per-point ratios against the first run'
	@echo '  make stability EXP=NN [RUNS=3] [MODE=lab|quick] [LABEL=prefix] [SPIN=1]'
	@echo '                     run experiment NN RUNS times back to back (labels prefix/1..N,'
	@echo '                     default stability/exp-NN), then print each verdict in every run'
	@echo '                     (same in k of N) and each point'"'"'s spread (results/<prefix>/stability.md);'
	@echo '                     SPIN=1 keeps one core busy meanwhile'
	@echo '  make redraw-check  every reference chart redrawn from its CSV, compared byte for byte'
	@echo '                     with the committed one (PDFs without their date)'
	@echo '  make reference     full sweeps of every experiment into results/reference/<device>/'
	@echo '                     (EXPS="07": only those, the others'"'"' CSVs kept)'
	@echo '  make peer-ggml     exp-03'"'"'s CPU decode beside ggml'"'"'s test-backend-ops, per format (GGML_SRC=path'
	@echo '                     or a clone at a pinned commit; ROUNDS=2): results/<label>/peers.csv, plots/<label>/peers.*'
	@echo '  make peer-ggml-batch  exp-03'"'"'s CPU batch kernels at M tokens a call beside ggml'"'"'s MUL_MAT'
	@echo '                     (TOKENS=1,2,4,8,16, FORMATS, ROUNDS=2): results/<label>/peers-batch.csv'
	@echo '  make peer-ggml-moe exp-08'"'"'s CPU MoE layer (active experts) beside ggml'"'"'s MUL_MAT_ID on the same'
	@echo '                     shapes (SHAPES="E,K,B,M,N", ROUNDS=2): results/<label>/peers-moe.csv'
	@echo '  make peer-ggml-attention  exp-07'"'"'s CPU decode attention beside ggml'"'"'s FLASH_ATTN_EXT on the same'
	@echo '                     shapes (SHAPES="B,HQ,HKV,D,L", ROUNDS=2): results/<label>/peers-attention.csv'
	@echo '  make peer-torch-layer  exp-09'"'"'s layer (BERT-large, Llama) in PyTorch on the CPU, eager and'
	@echo '                     torch.compile, its time by class of op (BATCH=1 SEQ=512; installs torch into'
	@echo '                     $(B)/peer/torch-venv): results/peer-torch/layer-bB-sS.csv and Chrome traces'
	@echo '  make mountain      the memory mountain: read bandwidth over footprints (the ceilings'"'"
	@echo '                     curve, reused or measured: a minute), its knees against the reported'
	@echo '                     cache sizes, into plots/<label>/mountain.{png,pdf,svg}'
	@echo '  make paper         build paper/paper.pdf from results/<label>/ and plots/<label>/'
	@echo '  make test          run the Criterion suites (GPU tests skip without a GPU)'
	@echo '  make test-emu      the CUDA kernels'"'"' device code on a CPU emulator of warps, barriers and'
	@echo '                     their PTX, each against its CPU reference (no GPU needed; CI runs it)'
	@echo '  make readme-tables regenerate each experiment README'"'"'s Results section and lab-sheet times from the reference runs'
	@echo '  make gpu-model [MODEL_SMS="80 90"] [GPUS=h200]  every CUDA kernel a verdict judges, by'
	@echo '                     its own SASS count (no GPU needed): occupancy, bytes in flight,'
	@echo '                     instructions per byte, the fraction of the roof against the verdict'"'"'s'
	@echo '                     bar (kernels/README.md): results/gpu-model/gpu-model.csv and a chart'
	@echo '  make sass KERNEL=gemv_dp4a [SM=90]  the SASS of the matching CUDA kernels: registers,'
	@echo '                     each loop'"'"'s instructions by kind (no GPU needed)'
	@echo '  make cpu-loops [FILE=...] [FUNC=...] [MARCH=...]  the loops of a CPU kernel file as'
	@echo '                     compiled for any -march: instructions, prefetches, multiply-adds'
	@echo '  make ab-decode [REV=HEAD] [MATRIX=1024x4096] [ROUNDS=200] [TOKENS=1]  this tree'"'"'s CPU decode'
	@echo '                     kernels against REV'"'"'s, validated, then timed call by call in one process'
	@echo '  make test-add-variant  add a kernel variant in a scratch copy and check it is'
	@echo '                     validated, timed, written and drawn (CI runs it)'
	@echo '  make check-gpu     on a GPU machine: build for it, validate every CUDA kernel, run'
	@echo '                     every experiment with --quick, print a summary (exit 77: no GPU)'
	@echo '  make check-cuda12 [CUDA12=12.3]  the CUDA code against CUDA 12 without its toolkit (CI runs'
	@echo '                     it): PyPI'"'"'s CUDA 12 wheels, clang-19 standing in for nvcc, every .cu'
	@echo '                     for sm_70 75 80 90, linked against CUDA 12'"'"'s libraries, into $(B)/cuda12/'
	@echo '  make gpu-day OUT=dir  on a GPU lent for ten minutes (540 s): check-gpu, every'
	@echo '                     experiment in lab mode under budgets from the time left, a'
	@echo '                     tarball of results, plots and logs in dir rewritten after each'
	@echo '                     (tests/gpu-day.sh --help: its variables; --plan: its plan)'
	@echo '  make bundle        download the .deb files a GPU machine without package access'
	@echo '                     needs into bundle/ (the build there unpacks what is missing)'
	@echo '  make slurm PARTITIONS="a100 h100" [EXPS="01 04"] [QUICK=1] [SBATCH_ARGS="..."]'
	@echo '                     on a Slurm login node: build once, a job array per partition'
	@echo '                     (a task per experiment, label PREFIX/<gpu>), then a job writing'
	@echo '                     the summary and the charts comparing the GPUs (results/slurm/<job>/)'
	@echo '  make test-slurm    as root: start a one-node Slurm cluster here, run make slurm on'
	@echo '                     it (CPU, quick) and check what comes back (minutes; not in make test)'
	@echo '  make build         build every binary into $(B)/ (the default)'
	@echo '  make deps          install missing Debian packages (as root) or print the command'
	@echo '  make clean         remove $(B)/'
	@echo '  make help          this text'
	@echo
	@echo 'Variables'
	@echo '  LABEL=name         name of the run: results/<name>/, plots/<name>/ (default: the'
	@echo '                     device'"'"'s slug, e.g. h100-sxm or cpu-amd-epyc)'
	@echo '  BACKEND=auto       cuda, cpu or auto (the GPU when there is one)'
	@echo '  QUICK=1            pass --quick: a smoke test, seconds per experiment'
	@echo '  FULL=1             pass --full: the reference sweeps (make reference sets it); without'
	@echo '                     QUICK or FULL a lab run: within its 105 s slot (--slot) on any CPU'
	@echo '  BUDGET=seconds     pass --budget: the run fits that wall time (+10 %); for make all'
	@echo '                     the whole series, split across the experiments'
	@echo '  ARGS="..."         more options for the experiment binary (see build/exp-NN --help)'
	@echo '  REFERENCE=none     do not overlay the checked-in reference run of this device'
	@echo '  EXP=NN RUNS="..."  for make compare: the experiment and the labels to compare'
	@echo '  RATIOS_FILE=file   for make compare: also write its ratio table there as a CSV'
	@echo '  EXP=NN RUNS=N      for make stability: the experiment and how many runs (default 3);'
	@echo '  MODE=lab|quick     its mode (default lab), SPIN=1 a busy loop on one core meanwhile'
	@echo '  SMS="75 80 ..."    CUDA architectures (default: $(SMS), plus PTX of the newest)'
	@echo '  OUT=dir            for make gpu-day: where the tarball goes'
	@echo '  PARTITIONS, EXPS   for make slurm: the partitions, the experiments (default all);'
	@echo '                     EXPS also for make all and make reference'
	@echo '  PREFIX=name        for make slurm: labels PREFIX/<gpu> (default reference, or'
	@echo '                     cluster for QUICK=1)'
	@echo '  SBATCH_ARGS="..."  for make slurm: added to every sbatch (--account=..., --qos=...)'
	@echo '  TIME_LIMIT=min     for make slurm: every array'"'"'s limit (default: harness/ops/slurm/time-limits.tsv)'
	@echo '  GRES, CPUS         for make slurm: a GPU task asks --gres=GRES (default gpu:1; none)'
	@echo '                     and --cpus-per-task=CPUS (default 4)'
	@echo '  NVCC=path          the CUDA compiler (empty: build the CPU backend only)'
	@echo '  CPU_ARCH=...       host code generation flags (default -march=native)'
	@echo '  B=dir              build folder (default build)'
	@echo '  CI=true            warnings are errors'
	@echo '  TESTFLAGS="..."    options for the Criterion runner (e.g. --verbose, --filter)'
