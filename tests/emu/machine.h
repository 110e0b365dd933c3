/*
 * machine.h -- what the PTX models (ptx.cpp) need of the machine
 * (machine.cpp) beyond cuda_shim.h: warp-wide operations that compute
 * their result once, the running block's shared memory, its cp.async
 * queues.
 */
#ifndef TESTS_EMU_MACHINE_H
#define TESTS_EMU_MACHINE_H

#include "cuda_shim.h"

#include <vector>

namespace rl_emu {

/* One warp-wide operation's meeting place: each lane's operands (in), what
 * the operation gives each lane (out), and the operation each lane came to. */
struct warp_slot {
    lane_words in[32];
    lane_words out[32];
    const char *op[32];
};

/* exchange(), and then once(slot), run by the last lane to arrive, before
 * any lane goes on: an mma's product or an ldmatrix's rows are computed
 * once per warp, each lane then reads its out[lane]. */
const warp_slot &exchange_once(const char *op, const uint32_t *mine, int n, void (*once)(warp_slot &));

/* bytes of the running block's dynamic shared memory at a shared-window
 * offset: a fault unless they lie within what the launch asked for and
 * the offset is a multiple of align. */
unsigned char *shared_at(uint32_t offset, size_t bytes, size_t align, const char *op);

/* cp.async: the running thread's copies not yet committed to a group
 * (open), and those committed and not yet waited for; whether this block
 * lands each copy when issued instead (machine.cpp says when). */
struct pending_copy {
    uint32_t dst;
    const void *src;
};
std::vector<pending_copy> &open_copies(void);
std::vector<pending_copy> &committed_copies(void);
bool copies_land_at_once(void);

} // namespace rl_emu

#endif
