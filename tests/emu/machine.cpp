/*
 * machine.cpp -- the emulated GPU. Every CUDA thread of a block is a fiber
 * (a ucontext with a stack of its own); a block's fibers take turns on one
 * OS thread, a worker, and RL_EMU_THREADS workers take the grid's blocks.
 *
 * Why fibers, not an OS thread per CUDA thread: a warp-wide operation is a
 * barrier of 32 threads. With OS threads each one is a round of wake-ups
 * and context switches through the kernel; with fibers it is 32 switches
 * in user space. And fibers run in an order the emulator chooses, so a
 * failure repeats, run after run.
 *
 * A fiber runs until it waits (at a warp-wide operation, at a barrier) or
 * ends; the next ready one runs then. The order is chosen to expose a
 * missing barrier. A warp whose lanes have all come to an operation goes
 * on at once, so each warp runs alone from one barrier to the next (as
 * far ahead of the others as a GPU's scheduler may let it get); the warps
 * take their turns in order or in reverse (by the parity of the block and
 * of the launch), and every __syncthreads reverses it. So between two
 * barriers every warp's accesses to shared memory come all before or all
 * after another's, both ways somewhere in a launch: a read with no barrier
 * between it and the write it needs sees the block's poison (its dynamic
 * shared memory is 0xff bytes, NaN as FP32 and FP16, at its start) or the
 * data of the tile before, and a write with no barrier after the reads
 * it must wait for overwrites what they see.
 */
#include "emu.h"
#include "machine.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <sys/mman.h>
#include <thread>
#include <ucontext.h>
#include <unistd.h>
#include <vector>
#ifdef __SANITIZE_ADDRESS__
#include <dlfcn.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

thread_local uint3 threadIdx, blockIdx;
thread_local dim3 blockDim, gridDim;

namespace rl_emu {
namespace {

/* A fiber's stack: the kernels keep fragments and loads in flight in
 * locals (a few KB); the sanitizers' redzones take more. */
enum { STACK_BYTES = 256 << 10, MAX_BLOCK_THREADS = 1024 };

enum class state { ready, at_warp_op, at_barrier, done };

struct fiber {
    ucontext_t ctx;
    char *stack = nullptr;
    unsigned tid = 0;
    state st = state::ready;
    const char *at = nullptr; /* the operation it waits at */
    unsigned ops = 0;         /* warp-wide operations it has begun */
    std::vector<pending_copy> open, committed;
};

/* Two slots, by the parity of the operation: a lane released from
 * operation n may begin n + 1 while another still reads n's slot; it cannot
 * begin n + 2 before every lane has come to n + 1. */
struct warp {
    int arrived = 0, exited = 0;
    warp_slot slot[2];
    unsigned seq[2][32];
};

struct worker {
    std::vector<fiber> fibers; /* stacks kept from launch to launch */
    std::vector<warp> warps;
    std::deque<unsigned> ready;
    fiber *cur = nullptr;
    ucontext_t home;
    void *home_stack = nullptr;
    size_t home_stack_bytes = 0;
    const std::function<void()> *kernel = nullptr;
    unsigned threads = 0, live = 0, exited = 0, waiting = 0, barriers = 0;
    bool reverse_first = false; /* this block's order before its first barrier */
    bool eager = false;         /* this block's cp.async copies land when issued */
    bool failed = false;
    char why[768];
    unsigned char *shared = nullptr;
    size_t shared_bytes = 0, shared_cap = 0;
};

thread_local worker *W;

char *new_stack(void)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(nullptr, STACK_BYTES + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        perror("rooflab-emu: mmap of a fiber's stack");
        abort();
    }
    mprotect(p, page, PROT_NONE); /* an overflow faults there, not in the next stack */
    return static_cast<char *>(p) + page;
}

void set_builtins(const fiber &f)
{
    threadIdx = {f.tid % blockDim.x, f.tid / blockDim.x % blockDim.y, f.tid / (blockDim.x * blockDim.y)};
}

#ifdef __SANITIZE_ADDRESS__
/* libc's swapcontext, not the address sanitizer's wrapper of it: the
 * wrapper unpoisons the whole stack it switches to at every switch (the
 * redzones of the frames live on it too: slow, and blind), and warns of
 * false reports; the fiber calls below tell the sanitizer of each switch
 * instead. (RTLD_NEXT would find the wrapper: the sanitizer's library
 * comes before libc.) */
int libc_swapcontext(ucontext_t *from, const ucontext_t *to)
{
    typedef int (*swap_fn)(ucontext_t *, const ucontext_t *);
    static const swap_fn real = [] {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        return libc ? reinterpret_cast<swap_fn>(dlsym(libc, "swapcontext")) : nullptr;
    }();
    return (real ? real : swapcontext)(from, to);
}
#endif

/* swapcontext, told to the address sanitizer (a stack switch it would
 * otherwise take for an overflow); `for_good`: the fiber left never runs again. */
void switch_to(ucontext_t *from, ucontext_t *to, const void *stack, size_t bytes, bool for_good)
{
#ifdef __SANITIZE_ADDRESS__
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(for_good ? nullptr : &fake, stack, bytes);
    libc_swapcontext(from, to);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    (void)stack, (void)bytes, (void)for_good;
    swapcontext(from, to);
#endif
}

/* Leaves `from` (a fiber, or the worker's home) for the next ready fiber,
 * or for home when none is: the block has ended, faulted or is stuck. */
void run_next(ucontext_t *from, bool for_good)
{
    worker &w = *W;
    if (!w.failed && !w.ready.empty()) {
        fiber &n = w.fibers[w.ready.front()];
        w.ready.pop_front();
        if (&n.ctx == from) /* itself: go on */
            return;
        w.cur = &n;
        set_builtins(n);
        switch_to(from, &n.ctx, n.stack, STACK_BYTES, for_good);
    } else {
        w.cur = nullptr;
        switch_to(from, &w.home, w.home_stack, w.home_stack_bytes, for_good);
    }
}

/* Waits, the running fiber marked as waiting at `op`, until released. */
void wait_at(state st, const char *op)
{
    fiber &f = *W->cur;
    f.st = st, f.at = op;
    run_next(&f.ctx, false);
}

/* Ready to run: first (its warp goes on) or last (after a barrier). */
void release(fiber &f, bool first)
{
    f.st = state::ready, f.at = nullptr;
    if (first)
        W->ready.push_front(f.tid);
    else
        W->ready.push_back(f.tid);
}

[[noreturn]] void thread_end(void)
{
    worker &w = *W;
    fiber &f = *w.cur;
    warp &wp = w.warps[f.tid / 32];
    if (!f.open.empty() || !f.committed.empty())
        fail("ended with %zu cp.async copies not waited for", f.open.size() + f.committed.size());
    if (wp.arrived)
        fail("exited while %d lanes of its warp wait at a warp-wide operation", wp.arrived);
    if (w.waiting)
        fail("exited while %u threads wait at __syncthreads (a barrier every thread of the block must reach)",
             w.waiting);
    f.st = state::done;
    w.live--, w.exited++, wp.exited++;
    run_next(&f.ctx, true);
    abort(); /* a finished fiber is never resumed */
}

void fiber_main(void)
{
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
    (*W->kernel)();
    thread_end();
}

/* Where the worker's threads wait, for a block that cannot go on. */
void describe_deadlock(worker &w)
{
    unsigned at_barrier = 0, at_op = 0;
    const char *op = "";
    for (unsigned t = 0; t < w.threads; t++) {
        const fiber &f = w.fibers[t];
        at_barrier += f.st == state::at_barrier;
        if (f.st == state::at_warp_op && !at_op++)
            op = f.at;
    }
    w.failed = true;
    snprintf(w.why, sizeof w.why,
             "block (%u,%u,%u): deadlock: %u threads wait at __syncthreads, %u at warp-wide operations (%s), "
             "%u have exited", blockIdx.x, blockIdx.y, blockIdx.z, at_barrier, at_op, op, w.exited);
}

/* Thread t, about to start the kernel on its own stack. (Apart from
 * run_block: getcontext returns twice, which the compiler must assume of
 * every local of the function that calls it.) */
__attribute__((noinline)) void start_fiber(fiber &f, unsigned t)
{
    f.tid = t, f.st = state::ready, f.at = nullptr, f.ops = 0;
    f.open.clear(), f.committed.clear();
#ifdef __SANITIZE_ADDRESS__
    /* the last thread on this stack never returned: its frames' poison stays */
    ASAN_UNPOISON_MEMORY_REGION(f.stack, STACK_BYTES);
#endif
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack;
    f.ctx.uc_stack.ss_size = STACK_BYTES;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiber_main, 0);
}

void run_block(worker &w, unsigned long b, unsigned launch_no)
{
    blockIdx = {(unsigned)(b % gridDim.x), (unsigned)(b / gridDim.x % gridDim.y),
                (unsigned)(b / ((unsigned long)gridDim.x * gridDim.y))};
    for (unsigned t = 0; t < w.threads; t++)
        start_fiber(w.fibers[t], t);
    for (warp &wp : w.warps) {
        wp.arrived = wp.exited = 0;
        memset(wp.seq, 0xff, sizeof wp.seq); /* no operation of this block yet */
    }
    w.live = w.threads, w.exited = w.waiting = w.barriers = 0;
    w.failed = false, w.why[0] = '\0';
    /* every combination of order and landing within four blocks or launches */
    w.reverse_first = ((b + launch_no) & 1) != 0;
    w.eager = ((b / 2 + launch_no / 2) & 1) != 0;
    if (w.shared)
        memset(w.shared, 0xff, w.shared_bytes);
    w.ready.clear();
    for (unsigned i = 0; i < w.threads; i++)
        w.ready.push_back(w.reverse_first ? w.threads - 1 - i : i);
    run_next(&w.home, false);
    if (!w.failed && w.live)
        describe_deadlock(w);
}

/* The worker's fibers, warps and shared memory for a launch. */
bool prepare(worker &w, const launch_shape &s, unsigned threads, std::string &why)
{
    while (w.fibers.size() < threads) {
        w.fibers.emplace_back();
        w.fibers.back().stack = new_stack();
    }
    w.warps.resize(threads / 32);
    w.threads = threads;
    arena a = s.shared ? s.shared() : arena{nullptr, 0};
    if (s.shared_bytes > a.capacity) {
        why = format("the launch asks for %zu bytes of dynamic shared memory; the driver's array holds %zu",
                     s.shared_bytes, a.capacity);
        return false;
    }
    w.shared = static_cast<unsigned char *>(a.base), w.shared_bytes = s.shared_bytes, w.shared_cap = a.capacity;
#ifdef __SANITIZE_ADDRESS__
    if (w.shared) /* a plain access past the launch's bytes is the sanitizer's to report */
        ASAN_POISON_MEMORY_REGION(w.shared + w.shared_bytes, w.shared_cap - w.shared_bytes);
#endif
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &w.home_stack, &w.home_stack_bytes);
        pthread_attr_destroy(&attr);
    }
    blockDim = s.block, gridDim = s.grid;
    return true;
}

void finish(worker &w)
{
#ifdef __SANITIZE_ADDRESS__
    if (w.shared) /* the array outlives the launch, and another launch may use more of it */
        ASAN_UNPOISON_MEMORY_REGION(w.shared, w.shared_cap);
#endif
    w.shared = nullptr;
}

std::vector<std::unique_ptr<worker>> pool;
std::atomic<unsigned> launches{0};

} // namespace

/* ---- what the shim and the PTX models call ------------------------------------------- */

unsigned lane_id(void) { return W->cur->tid % 32; }

void fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    worker *w = W;
    if (!w || !w->cur) { /* not inside a kernel: a driver's mistake */
        fprintf(stderr, "rooflab-emu: %s\n", msg);
        abort();
    }
    fiber &f = *w->cur;
    if (!w->failed) {
        w->failed = true;
        snprintf(w->why, sizeof w->why, "block (%u,%u,%u) thread %u (warp %u, lane %u): %s", blockIdx.x, blockIdx.y,
                 blockIdx.z, f.tid, f.tid / 32, f.tid % 32, msg);
    }
    run_next(&f.ctx, true); /* home: the block stops */
    abort();
}

const warp_slot &exchange_once(const char *op, const uint32_t *mine, int n, void (*once)(warp_slot &))
{
    worker &w = *W;
    fiber &f = *w.cur;
    const unsigned lane = f.tid % 32, wi = f.tid / 32;
    warp &wp = w.warps[wi];
    if (wp.exited)
        fail("%s: %d lanes of the warp have exited (a warp-wide operation needs all 32)", op, wp.exited);
    const unsigned parity = f.ops & 1;
    warp_slot &s = wp.slot[parity];
    wp.seq[parity][lane] = f.ops++;
    if (n)
        memcpy(s.in[lane], mine, sizeof(uint32_t) * (size_t)n);
    s.op[lane] = op;
    if (++wp.arrived < 32) {
        wait_at(state::at_warp_op, op);
        return s;
    }
    wp.arrived = 0;
    for (unsigned l = 0; l < 32; l++)
        if (wp.seq[parity][l] != wp.seq[parity][lane] || strcmp(s.op[l], op))
            fail("lane %u came to %s as its warp-wide operation %u, lane %u to %s as its %u: an operation not "
                 "every lane of the warp reaches", l, s.op[l], wp.seq[parity][l], lane, op, wp.seq[parity][lane]);
    if (once)
        once(s);
    for (unsigned l = 32; l-- > 0;) /* first in the queue, lane 0 at its head: the warp goes on */
        if (l != lane)
            release(w.fibers[wi * 32 + l], true);
    return s;
}

const lane_words *exchange(const char *op, const uint32_t *mine, int n)
{
    return exchange_once(op, mine, n, nullptr).in;
}

void block_barrier(void)
{
    worker &w = *W;
    fiber &f = *w.cur;
    if (w.exited)
        fail("__syncthreads after %u threads of the block exited (a barrier every thread of the block must reach)",
             w.exited);
    if (w.warps[f.tid / 32].arrived)
        fail("__syncthreads while lanes of its warp wait at a warp-wide operation");
    f.st = state::at_barrier, f.at = "__syncthreads";
    if (++w.waiting < w.live) {
        run_next(&f.ctx, false);
        return;
    }
    /* all here: released in this barrier's order, this thread among them */
    w.waiting = 0;
    const bool reverse = ((++w.barriers & 1) != 0) != w.reverse_first;
    for (unsigned i = 0; i < w.threads; i++) {
        fiber &o = w.fibers[reverse ? w.threads - 1 - i : i];
        if (o.st == state::at_barrier)
            release(o, false);
    }
    run_next(&f.ctx, false);
}

unsigned char *shared_at(uint32_t offset, size_t bytes, size_t align, const char *op)
{
    const worker &w = *W;
    if (offset % align)
        fail("%s at shared offset %u: not %zu-byte aligned", op, offset, align);
    if ((size_t)offset + bytes > w.shared_bytes)
        fail("%s of %zu bytes at shared offset %u: past the launch's %zu bytes of dynamic shared memory", op, bytes,
             offset, w.shared_bytes);
    return w.shared + offset;
}

std::vector<pending_copy> &open_copies(void) { return W->cur->open; }
std::vector<pending_copy> &committed_copies(void) { return W->cur->committed; }
bool copies_land_at_once(void) { return W->eager; }

int workers(void)
{
    static const int n = [] {
        const char *e = getenv("RL_EMU_THREADS");
        int v = e && *e ? atoi(e) : 2;
        return v < 1 ? 1 : v > 64 ? 64 : v;
    }();
    return n;
}

bool launch(const launch_shape &s, const std::function<void()> &kernel, std::string &why)
{
    const unsigned threads = s.block.x * s.block.y * s.block.z;
    const unsigned long blocks = (unsigned long)s.grid.x * s.grid.y * s.grid.z;
    why.clear();
    if (!threads || threads > MAX_BLOCK_THREADS || threads % 32) {
        why = format("a block of %u threads: the emulator takes whole warps, up to %d", threads, MAX_BLOCK_THREADS);
        return false;
    }
    if (!blocks) {
        why = "an empty grid";
        return false;
    }
    const unsigned launch_no = launches++;
    const int n = (int)std::min<unsigned long>((unsigned long)workers(), blocks);
    while ((int)pool.size() < n)
        pool.push_back(std::make_unique<worker>());
    std::atomic<unsigned long> next{0};
    std::atomic<bool> stop{false};
    std::mutex first_lock;
    auto work = [&](int i) {
        worker &w = *pool[(size_t)i];
        W = &w;
        w.kernel = &kernel;
        std::string prep;
        if (!prepare(w, s, threads, prep)) {
            std::lock_guard<std::mutex> g(first_lock);
            if (why.empty())
                why = prep;
            stop = true;
        }
        for (unsigned long b; !stop && (b = next++) < blocks;) {
            run_block(w, b, launch_no);
            if (w.failed) {
                std::lock_guard<std::mutex> g(first_lock);
                if (why.empty())
                    why = w.why;
                stop = true;
            }
        }
        finish(w);
        W = nullptr;
    };
    if (n == 1) {
        work(0);
    } else {
        std::vector<std::thread> ts;
        for (int i = 0; i < n; i++)
            ts.emplace_back(work, i);
        for (std::thread &t : ts)
            t.join();
    }
    return why.empty();
}

} // namespace rl_emu

/* ---- the shared window ------------------------------------------------------------------ */

size_t __cvta_generic_to_shared(const void *p)
{
    const rl_emu::worker &w = *rl_emu::W;
    const unsigned char *c = static_cast<const unsigned char *>(p);
    if (!w.shared || c < w.shared || c > w.shared + w.shared_cap)
        rl_emu::fail("__cvta_generic_to_shared(%p): not in the block's dynamic shared memory", p);
    return (size_t)(c - w.shared);
}

void *__cvta_shared_to_generic(size_t a) { return rl_emu::shared_at((uint32_t)a, 0, 1, "__cvta_shared_to_generic"); }
