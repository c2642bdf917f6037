/* The OpenCL handle types nvToolsExtOpenCL.h names, for test programs built
 * where no OpenCL SDK is installed: opaque pointers, as the OpenCL headers
 * declare them.  Only the NVTX naming calls use them. */
#ifndef ASYS_TEST_CL_H
#define ASYS_TEST_CL_H
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_sampler *cl_sampler;
typedef struct _cl_program *cl_program;
typedef struct _cl_event *cl_event;
#endif
