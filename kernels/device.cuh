/*
 * device.cuh -- what the launchers ask of the current CUDA device (device.cu
 * answers): its SMs, asked again only when the device changes, for the
 * launch plans that size a grid to the GPU (attention, gemv, quant, moe).
 */
#ifndef KERNELS_DEVICE_CUH
#define KERNELS_DEVICE_CUH

/* The SMs of the current device. */
int rl_device_sms(void);

#endif
