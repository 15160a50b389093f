// vk.h is the C half of the vulkan package's binding: the Vulkan loader is
// opened at run time with dlopen, vkGetInstanceProcAddr is found with dlsym
// and every other entry point is loaded through it. The helpers take and
// return plain values (handles, integers, C arrays), so no Go pointer is
// ever stored in C memory. Included only by vk_cgo.go.
#ifndef WEFT_VK_H
#define WEFT_VK_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define VK_NO_PROTOTYPES 1
#include <vulkan/vulkan.h>

// wv_info is what weft learns about a physical device.
typedef struct {
	char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	char driverName[VK_MAX_DRIVER_NAME_SIZE];
	char driverInfo[VK_MAX_DRIVER_INFO_SIZE];
	uint32_t apiVersion, driverVersion, vendorID, deviceID, deviceType, driverID;
	uint32_t maxGroupCount[3], maxGroupSize[3], maxInvocations, maxShared;
	uint32_t maxPush, maxStorageRange;
	uint64_t minStorageAlign, nonCoherentAtom;
	uint32_t float16, int8, storage16, storage8, int16, float64;
	// Whether the device lists the extensions that carry those features
	// before they became core (16-bit storage: 1.1, float16/int8: 1.2).
	uint32_t ext16Storage, extFloat16Int8;
	uint8_t cacheUUID[VK_UUID_SIZE]; // pipelineCacheUUID
	int32_t queueFamily;
	// Memory: the type for device buffers and for staging, with their flags.
	int32_t devType, stagingType;
	uint32_t devFlags, stagingFlags;
	uint64_t devHeap;
} wv_info;

// The helpers, defined once (in vk_cgo.go, which defines WV_IMPL).
int wv_open(char *err, int errlen);
VkResult wv_create_instance(VkInstance *out, uint32_t *version);
const char *wv_missing(void);
uint32_t wv_physical_devices(VkInstance inst, VkPhysicalDevice *out, uint32_t max);
void wv_device_info(VkPhysicalDevice pd, uint32_t instVersion, wv_info *o);
VkResult wv_create_device(VkPhysicalDevice pd, wv_info *o, int storage16, int float16, VkDevice *dev, VkQueue *q);
VkResult wv_buffer(VkDevice dev, uint64_t size, int32_t mt, int map, VkBuffer *buf, VkDeviceMemory *mem, void **mapped);
void wv_free_buffer(VkDevice dev, VkBuffer buf, VkDeviceMemory mem);
void wv_destroy_device(VkDevice dev);
VkResult wv_pipeline_cache(VkDevice dev, const void *data, size_t size, VkPipelineCache *c);
VkResult wv_pipeline_cache_data(VkDevice dev, VkPipelineCache c, size_t *size, void *data);
VkResult wv_merge_cache(VkDevice dev, VkPipelineCache dst, VkPipelineCache src);
void wv_destroy_cache(VkDevice dev, VkPipelineCache c);
void wv_destroy_pipeline(VkDevice dev, VkPipeline pipe, VkPipelineLayout pl, VkDescriptorSetLayout dsl);
void wv_destroy_instance(VkInstance inst);
void wv_device_wait_idle(VkDevice dev);
VkResult wv_pipeline(VkDevice dev, VkPipelineCache cache, const uint32_t *code, size_t codeBytes,
	uint32_t nbind, uint32_t push, VkDescriptorSetLayout *dsl, VkPipelineLayout *pl, VkPipeline *pipe);
VkResult wv_state_create(VkDevice dev, uint32_t qfam, uint32_t nsets, uint32_t ndesc,
	VkDescriptorPool *dp, VkCommandPool *cp, VkCommandBuffer *cb, VkFence *fence);
void wv_state_destroy(VkDevice dev, VkDescriptorPool dp, VkCommandPool cp, VkFence fence);
VkResult wv_set(VkDevice dev, VkDescriptorPool dp, VkDescriptorSetLayout dsl, uint32_t n,
	const VkBuffer *bufs, const uint64_t *offs, const uint64_t *ranges, VkDescriptorSet *set);
void wv_cmd_dispatch(VkCommandBuffer cb, VkPipeline pipe, VkPipelineLayout pl, VkDescriptorSet set,
	const void *push, uint32_t pushBytes, uint32_t gx, uint32_t gy, uint32_t gz);
void wv_cmd_barrier(VkCommandBuffer cb);
void wv_cmd_host_barrier(VkCommandBuffer cb);
void wv_cmd_copy(VkCommandBuffer cb, VkBuffer src, uint64_t srcOff, VkBuffer dst, uint64_t dstOff, uint64_t size);
VkResult wv_cmd_end(VkCommandBuffer cb);
VkResult wv_submit(VkDevice dev, VkQueue q, VkCommandBuffer cb, VkFence fence);
VkResult wv_wait(VkDevice dev, VkFence fence, uint64_t timeout);

#ifdef WV_IMPL
static void *wv_lib;
static PFN_vkGetInstanceProcAddr wv_gipa;

#define WV_FNS(X) \
	X(vkEnumerateInstanceVersion) \
	X(vkCreateInstance) \
	X(vkDestroyInstance) \
	X(vkEnumeratePhysicalDevices) \
	X(vkGetPhysicalDeviceProperties) \
	X(vkGetPhysicalDeviceProperties2) \
	X(vkGetPhysicalDeviceFeatures2) \
	X(vkGetPhysicalDeviceQueueFamilyProperties) \
	X(vkGetPhysicalDeviceMemoryProperties) \
	X(vkEnumerateDeviceExtensionProperties) \
	X(vkCreateDevice) \
	X(vkDestroyDevice) \
	X(vkGetDeviceQueue) \
	X(vkDeviceWaitIdle) \
	X(vkCreateBuffer) \
	X(vkDestroyBuffer) \
	X(vkGetBufferMemoryRequirements) \
	X(vkAllocateMemory) \
	X(vkFreeMemory) \
	X(vkBindBufferMemory) \
	X(vkMapMemory) \
	X(vkCreateShaderModule) \
	X(vkDestroyShaderModule) \
	X(vkCreateDescriptorSetLayout) \
	X(vkDestroyDescriptorSetLayout) \
	X(vkCreatePipelineLayout) \
	X(vkDestroyPipelineLayout) \
	X(vkCreatePipelineCache) \
	X(vkDestroyPipelineCache) \
	X(vkGetPipelineCacheData) \
	X(vkMergePipelineCaches) \
	X(vkCreateComputePipelines) \
	X(vkDestroyPipeline) \
	X(vkCreateDescriptorPool) \
	X(vkDestroyDescriptorPool) \
	X(vkAllocateDescriptorSets) \
	X(vkUpdateDescriptorSets) \
	X(vkCreateCommandPool) \
	X(vkDestroyCommandPool) \
	X(vkAllocateCommandBuffers) \
	X(vkBeginCommandBuffer) \
	X(vkEndCommandBuffer) \
	X(vkCmdBindPipeline) \
	X(vkCmdBindDescriptorSets) \
	X(vkCmdPushConstants) \
	X(vkCmdDispatch) \
	X(vkCmdPipelineBarrier) \
	X(vkCmdCopyBuffer) \
	X(vkCreateFence) \
	X(vkDestroyFence) \
	X(vkResetFences) \
	X(vkWaitForFences) \
	X(vkQueueSubmit) \
	X(vkQueueWaitIdle)

#define WV_DECL(f) static PFN_##f wv_##f;
WV_FNS(WV_DECL)
#undef WV_DECL

// wv_open loads the loader library. It returns 0, or 1 with a message in err.
int wv_open(char *err, int errlen) {
	if (wv_gipa) return 0;
	const char *names[] = {"libvulkan.so.1", "libvulkan.so", "libvulkan.1.dylib", "libMoltenVK.dylib"};
	for (int i = 0; i < 4 && !wv_lib; i++) wv_lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!wv_lib) {
		const char *e = dlerror();
		strncpy(err, e ? e : "dlopen libvulkan.so.1 failed", errlen - 1);
		err[errlen - 1] = 0;
		return 1;
	}
	wv_gipa = (PFN_vkGetInstanceProcAddr)dlsym(wv_lib, "vkGetInstanceProcAddr");
	if (!wv_gipa) {
		strncpy(err, "libvulkan has no vkGetInstanceProcAddr", errlen - 1);
		err[errlen - 1] = 0;
		return 1;
	}
	wv_vkCreateInstance = (PFN_vkCreateInstance)wv_gipa(NULL, "vkCreateInstance");
	wv_vkEnumerateInstanceVersion = (PFN_vkEnumerateInstanceVersion)wv_gipa(NULL, "vkEnumerateInstanceVersion");
	if (!wv_vkCreateInstance) {
		strncpy(err, "libvulkan has no vkCreateInstance", errlen - 1);
		err[errlen - 1] = 0;
		return 1;
	}
	return 0;
}

// wv_create_instance creates an instance (API 1.1 when the loader has it)
// and loads the remaining entry points through vkGetInstanceProcAddr. It
// returns the instance API version in *version.
VkResult wv_create_instance(VkInstance *out, uint32_t *version) {
	uint32_t v = VK_API_VERSION_1_0;
	if (wv_vkEnumerateInstanceVersion) wv_vkEnumerateInstanceVersion(&v);
	uint32_t want = v >= VK_API_VERSION_1_1 ? VK_API_VERSION_1_1 : VK_API_VERSION_1_0;
	VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
	app.pApplicationName = "weft";
	app.pEngineName = "weft";
	app.apiVersion = want;
	VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
	ci.pApplicationInfo = &app;
	VkResult r = wv_vkCreateInstance(&ci, NULL, out);
	if (r != VK_SUCCESS) return r;
	*version = want;
#define WV_LOAD(f) if (!wv_##f) wv_##f = (PFN_##f)wv_gipa(*out, #f);
	WV_FNS(WV_LOAD)
#undef WV_LOAD
	return VK_SUCCESS;
}

// wv_missing names the first entry point (other than the optional 1.1
// ones) that could not be loaded, or returns NULL.
const char *wv_missing(void) {
#define WV_CHECK(f) if (!wv_##f && strcmp(#f, "vkGetPhysicalDeviceProperties2") && strcmp(#f, "vkGetPhysicalDeviceFeatures2") && strcmp(#f, "vkEnumerateInstanceVersion")) return #f;
	WV_FNS(WV_CHECK)
#undef WV_CHECK
	return NULL;
}

uint32_t wv_physical_devices(VkInstance inst, VkPhysicalDevice *out, uint32_t max) {
	uint32_t n = max;
	VkResult r = wv_vkEnumeratePhysicalDevices(inst, &n, out);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) return 0;
	return n;
}


static int wv_has_ext(VkExtensionProperties *exts, uint32_t n, const char *name) {
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(exts[i].extensionName, name)) return 1;
	return 0;
}

// wv_pick_type picks a memory type allowed by bits with all of need, the
// one with the most of want; -1 when none has need.
static int32_t wv_pick_type(VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, uint32_t need, uint32_t want) {
	int32_t best = -1;
	int bestScore = -1;
	for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
		uint32_t f = mp->memoryTypes[i].propertyFlags;
		if (!(bits & (1u << i)) || (f & need) != need) continue;
		int score = __builtin_popcount(f & want);
		if (score > bestScore) best = i, bestScore = score;
	}
	return best;
}

void wv_device_info(VkPhysicalDevice pd, uint32_t instVersion, wv_info *o) {
	memset(o, 0, sizeof *o);
	VkPhysicalDeviceProperties p;
	wv_vkGetPhysicalDeviceProperties(pd, &p);
	strncpy(o->name, p.deviceName, sizeof o->name - 1);
	o->apiVersion = p.apiVersion;
	o->driverVersion = p.driverVersion;
	o->vendorID = p.vendorID;
	o->deviceID = p.deviceID;
	o->deviceType = p.deviceType;
	for (int i = 0; i < 3; i++) {
		o->maxGroupCount[i] = p.limits.maxComputeWorkGroupCount[i];
		o->maxGroupSize[i] = p.limits.maxComputeWorkGroupSize[i];
	}
	o->maxInvocations = p.limits.maxComputeWorkGroupInvocations;
	o->maxShared = p.limits.maxComputeSharedMemorySize;
	o->maxPush = p.limits.maxPushConstantsSize;
	o->maxStorageRange = p.limits.maxStorageBufferRange;
	o->minStorageAlign = p.limits.minStorageBufferOffsetAlignment;
	o->nonCoherentAtom = p.limits.nonCoherentAtomSize;
	memcpy(o->cacheUUID, p.pipelineCacheUUID, VK_UUID_SIZE);

	uint32_t next = 0;
	wv_vkEnumerateDeviceExtensionProperties(pd, NULL, &next, NULL);
	VkExtensionProperties *exts = calloc(next ? next : 1, sizeof *exts);
	wv_vkEnumerateDeviceExtensionProperties(pd, NULL, &next, exts);
	int v11 = instVersion >= VK_API_VERSION_1_1 && p.apiVersion >= VK_API_VERSION_1_1;
	int v12 = v11 && p.apiVersion >= VK_API_VERSION_1_2;
	o->ext16Storage = wv_has_ext(exts, next, "VK_KHR_16bit_storage");
	o->extFloat16Int8 = wv_has_ext(exts, next, "VK_KHR_shader_float16_int8");
	if (v11 && wv_vkGetPhysicalDeviceFeatures2) {
		// Chain only the structures the device knows (core version or extension).
		VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
		VkPhysicalDevice16BitStorageFeatures s16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
		VkPhysicalDevice8BitStorageFeatures s8 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
		VkPhysicalDeviceShaderFloat16Int8Features f16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
		void **tail = &f2.pNext;
		*tail = &s16;
		tail = &s16.pNext;
		if (v12 || wv_has_ext(exts, next, "VK_KHR_8bit_storage")) *tail = &s8, tail = &s8.pNext;
		if (v12 || wv_has_ext(exts, next, "VK_KHR_shader_float16_int8")) *tail = &f16, tail = &f16.pNext;
		wv_vkGetPhysicalDeviceFeatures2(pd, &f2);
		o->int16 = f2.features.shaderInt16;
		o->float64 = f2.features.shaderFloat64;
		o->storage16 = s16.storageBuffer16BitAccess;
		o->storage8 = s8.storageBuffer8BitAccess;
		o->float16 = f16.shaderFloat16;
		o->int8 = f16.shaderInt8;
	}
	if (v12 && wv_vkGetPhysicalDeviceProperties2) {
		VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
		VkPhysicalDeviceDriverProperties dp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
		p2.pNext = &dp;
		wv_vkGetPhysicalDeviceProperties2(pd, &p2);
		o->driverID = dp.driverID;
		strncpy(o->driverName, dp.driverName, sizeof o->driverName - 1);
		strncpy(o->driverInfo, dp.driverInfo, sizeof o->driverInfo - 1);
	}
	free(exts);

	o->queueFamily = -1;
	uint32_t nq = 0;
	wv_vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
	VkQueueFamilyProperties *qs = calloc(nq ? nq : 1, sizeof *qs);
	wv_vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qs);
	// Prefer a compute queue without graphics (an async compute queue).
	for (uint32_t i = 0; i < nq; i++)
		if ((qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qs[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) { o->queueFamily = i; break; }
	for (uint32_t i = 0; i < nq && o->queueFamily < 0; i++)
		if (qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) o->queueFamily = i;
	free(qs);
	o->devType = o->stagingType = -1;
}

// wv_create_device creates a logical device with one compute queue, then
// probes the memory types that storage buffers may use. storage16 enables
// storageBuffer16BitAccess and float16 enables shaderFloat16 (the caller
// asks only for what the device reported): features a shader uses must be
// enabled here, reporting them is not enough. The structures go in the
// pNext chain of VkDeviceCreateInfo, and the extensions that carry them
// are enabled too when the device lists them (needed below the Vulkan
// version where they became core; harmless above it).
VkResult wv_create_device(VkPhysicalDevice pd, wv_info *o, int storage16, int float16, VkDevice *dev, VkQueue *q) {
	float prio = 1;
	VkDeviceQueueCreateInfo qi = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
	qi.queueFamilyIndex = o->queueFamily;
	qi.queueCount = 1;
	qi.pQueuePriorities = &prio;
	VkDeviceCreateInfo ci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
	ci.queueCreateInfoCount = 1;
	ci.pQueueCreateInfos = &qi;
	VkPhysicalDevice16BitStorageFeatures s16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
	VkPhysicalDeviceShaderFloat16Int8Features f16 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
	const char *exts[2];
	uint32_t next = 0;
	const void **tail = &ci.pNext;
	if (storage16) {
		s16.storageBuffer16BitAccess = VK_TRUE;
		*tail = &s16, tail = (const void **)&s16.pNext;
		if (o->ext16Storage) exts[next++] = "VK_KHR_16bit_storage";
	}
	if (float16) {
		f16.shaderFloat16 = VK_TRUE;
		*tail = &f16, tail = (const void **)&f16.pNext;
		if (o->extFloat16Int8) exts[next++] = "VK_KHR_shader_float16_int8";
	}
	ci.enabledExtensionCount = next;
	ci.ppEnabledExtensionNames = next ? exts : NULL;
	VkResult r = wv_vkCreateDevice(pd, &ci, NULL, dev);
	if (r != VK_SUCCESS) return r;
	wv_vkGetDeviceQueue(*dev, o->queueFamily, 0, q);

	VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
	bi.size = 256;
	bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
	VkBuffer b;
	r = wv_vkCreateBuffer(*dev, &bi, NULL, &b);
	if (r != VK_SUCCESS) return r;
	VkMemoryRequirements req;
	wv_vkGetBufferMemoryRequirements(*dev, b, &req);
	wv_vkDestroyBuffer(*dev, b, NULL);
	VkPhysicalDeviceMemoryProperties mp;
	wv_vkGetPhysicalDeviceMemoryProperties(pd, &mp);
	uint32_t hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	o->devType = wv_pick_type(&mp, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
	if (o->devType < 0) o->devType = wv_pick_type(&mp, req.memoryTypeBits, 0, 0);
	o->stagingType = wv_pick_type(&mp, req.memoryTypeBits, hv, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
	if (o->devType >= 0) {
		o->devFlags = mp.memoryTypes[o->devType].propertyFlags;
		o->devHeap = mp.memoryHeaps[mp.memoryTypes[o->devType].heapIndex].size;
	}
	if (o->stagingType >= 0) o->stagingFlags = mp.memoryTypes[o->stagingType].propertyFlags;
	return VK_SUCCESS;
}

// wv_buffer creates a storage buffer of size bytes in memory type mt, mapped
// into *mapped when map is set.
VkResult wv_buffer(VkDevice dev, uint64_t size, int32_t mt, int map, VkBuffer *buf, VkDeviceMemory *mem, void **mapped) {
	VkBufferCreateInfo bi = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
	bi.size = size;
	bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
	VkResult r = wv_vkCreateBuffer(dev, &bi, NULL, buf);
	if (r != VK_SUCCESS) return r;
	VkMemoryRequirements req;
	wv_vkGetBufferMemoryRequirements(dev, *buf, &req);
	VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
	ai.allocationSize = req.size;
	ai.memoryTypeIndex = mt;
	r = wv_vkAllocateMemory(dev, &ai, NULL, mem);
	if (r != VK_SUCCESS) {
		wv_vkDestroyBuffer(dev, *buf, NULL);
		return r;
	}
	r = wv_vkBindBufferMemory(dev, *buf, *mem, 0);
	if (r == VK_SUCCESS && map) r = wv_vkMapMemory(dev, *mem, 0, VK_WHOLE_SIZE, 0, mapped);
	if (r != VK_SUCCESS) {
		wv_vkDestroyBuffer(dev, *buf, NULL);
		wv_vkFreeMemory(dev, *mem, NULL);
	}
	return r;
}

void wv_free_buffer(VkDevice dev, VkBuffer buf, VkDeviceMemory mem) {
	wv_vkDestroyBuffer(dev, buf, NULL);
	wv_vkFreeMemory(dev, mem, NULL); // implicitly unmaps
}

void wv_destroy_device(VkDevice dev) { wv_vkDestroyDevice(dev, NULL); }

// wv_pipeline_cache creates a pipeline cache holding size bytes of
// initial data (none when size is 0); the data is copied.
VkResult wv_pipeline_cache(VkDevice dev, const void *data, size_t size, VkPipelineCache *c) {
	VkPipelineCacheCreateInfo ci = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
	ci.initialDataSize = size;
	ci.pInitialData = size ? data : NULL;
	return wv_vkCreatePipelineCache(dev, &ci, NULL, c);
}

// wv_pipeline_cache_data is vkGetPipelineCacheData: the size when data is
// NULL, else up to *size bytes.
VkResult wv_pipeline_cache_data(VkDevice dev, VkPipelineCache c, size_t *size, void *data) {
	return wv_vkGetPipelineCacheData(dev, c, size, data);
}

VkResult wv_merge_cache(VkDevice dev, VkPipelineCache dst, VkPipelineCache src) {
	return wv_vkMergePipelineCaches(dev, dst, 1, &src);
}

void wv_destroy_cache(VkDevice dev, VkPipelineCache c) { wv_vkDestroyPipelineCache(dev, c, NULL); }

void wv_destroy_pipeline(VkDevice dev, VkPipeline pipe, VkPipelineLayout pl, VkDescriptorSetLayout dsl) {
	wv_vkDestroyPipeline(dev, pipe, NULL);
	wv_vkDestroyPipelineLayout(dev, pl, NULL);
	wv_vkDestroyDescriptorSetLayout(dev, dsl, NULL);
}

void wv_destroy_instance(VkInstance inst) { wv_vkDestroyInstance(inst, NULL); }

void wv_device_wait_idle(VkDevice dev) { wv_vkDeviceWaitIdle(dev); }

// wv_pipeline builds a compute pipeline whose descriptor set 0 has
// nbind storage buffers and whose push constants take push bytes.
VkResult wv_pipeline(VkDevice dev, VkPipelineCache cache, const uint32_t *code, size_t codeBytes,
	uint32_t nbind, uint32_t push, VkDescriptorSetLayout *dsl, VkPipelineLayout *pl, VkPipeline *pipe) {
	VkShaderModuleCreateInfo mi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
	mi.codeSize = codeBytes;
	mi.pCode = code;
	VkShaderModule mod;
	VkResult r = wv_vkCreateShaderModule(dev, &mi, NULL, &mod);
	if (r != VK_SUCCESS) return r;
	VkDescriptorSetLayoutBinding b[8];
	memset(b, 0, sizeof b);
	for (uint32_t i = 0; i < nbind && i < 8; i++) {
		b[i].binding = i;
		b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
		b[i].descriptorCount = 1;
		b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
	}
	VkDescriptorSetLayoutCreateInfo li = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
	li.bindingCount = nbind;
	li.pBindings = b;
	r = wv_vkCreateDescriptorSetLayout(dev, &li, NULL, dsl);
	if (r != VK_SUCCESS) goto out;
	VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, push};
	VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
	pli.setLayoutCount = 1;
	pli.pSetLayouts = dsl;
	pli.pushConstantRangeCount = push ? 1 : 0;
	pli.pPushConstantRanges = &pr;
	r = wv_vkCreatePipelineLayout(dev, &pli, NULL, pl);
	if (r != VK_SUCCESS) {
		wv_vkDestroyDescriptorSetLayout(dev, *dsl, NULL);
		goto out;
	}
	VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
	ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
	ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
	ci.stage.module = mod;
	ci.stage.pName = "main";
	ci.layout = *pl;
	r = wv_vkCreateComputePipelines(dev, cache, 1, &ci, NULL, pipe);
	if (r != VK_SUCCESS) {
		wv_vkDestroyPipelineLayout(dev, *pl, NULL);
		wv_vkDestroyDescriptorSetLayout(dev, *dsl, NULL);
	}
out:
	wv_vkDestroyShaderModule(dev, mod, NULL);
	return r;
}

// wv_state_create makes what one run state needs: a descriptor pool for
// nsets sets of up to ndesc storage buffers in all, a command pool with one
// command buffer, and a fence.
VkResult wv_state_create(VkDevice dev, uint32_t qfam, uint32_t nsets, uint32_t ndesc,
	VkDescriptorPool *dp, VkCommandPool *cp, VkCommandBuffer *cb, VkFence *fence) {
	*dp = VK_NULL_HANDLE;
	*cp = VK_NULL_HANDLE;
	*fence = VK_NULL_HANDLE;
	VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, ndesc ? ndesc : 1};
	VkDescriptorPoolCreateInfo di = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
	di.maxSets = nsets ? nsets : 1;
	di.poolSizeCount = 1;
	di.pPoolSizes = &ps;
	VkResult r = wv_vkCreateDescriptorPool(dev, &di, NULL, dp);
	if (r != VK_SUCCESS) return r;
	VkCommandPoolCreateInfo ci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
	ci.queueFamilyIndex = qfam;
	r = wv_vkCreateCommandPool(dev, &ci, NULL, cp);
	if (r != VK_SUCCESS) return r;
	VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
	ai.commandPool = *cp;
	ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	ai.commandBufferCount = 1;
	r = wv_vkAllocateCommandBuffers(dev, &ai, cb);
	if (r != VK_SUCCESS) return r;
	VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	r = wv_vkCreateFence(dev, &fi, NULL, fence);
	if (r != VK_SUCCESS) return r;
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	return wv_vkBeginCommandBuffer(*cb, &bi);
}

void wv_state_destroy(VkDevice dev, VkDescriptorPool dp, VkCommandPool cp, VkFence fence) {
	if (fence) wv_vkDestroyFence(dev, fence, NULL);
	if (cp) wv_vkDestroyCommandPool(dev, cp, NULL);
	if (dp) wv_vkDestroyDescriptorPool(dev, dp, NULL);
}

// wv_set allocates a descriptor set with layout dsl and points its n
// bindings at the buffer ranges given.
VkResult wv_set(VkDevice dev, VkDescriptorPool dp, VkDescriptorSetLayout dsl, uint32_t n,
	const VkBuffer *bufs, const uint64_t *offs, const uint64_t *ranges, VkDescriptorSet *set) {
	VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
	ai.descriptorPool = dp;
	ai.descriptorSetCount = 1;
	ai.pSetLayouts = &dsl;
	VkResult r = wv_vkAllocateDescriptorSets(dev, &ai, set);
	if (r != VK_SUCCESS) return r;
	VkDescriptorBufferInfo bi[8];
	VkWriteDescriptorSet w[8];
	memset(w, 0, sizeof w);
	for (uint32_t i = 0; i < n && i < 8; i++) {
		bi[i].buffer = bufs[i];
		bi[i].offset = offs[i];
		bi[i].range = ranges[i];
		w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
		w[i].dstSet = *set;
		w[i].dstBinding = i;
		w[i].descriptorCount = 1;
		w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
		w[i].pBufferInfo = &bi[i];
	}
	wv_vkUpdateDescriptorSets(dev, n, w, 0, NULL);
	return VK_SUCCESS;
}

void wv_cmd_dispatch(VkCommandBuffer cb, VkPipeline pipe, VkPipelineLayout pl, VkDescriptorSet set,
	const void *push, uint32_t pushBytes, uint32_t gx, uint32_t gy, uint32_t gz) {
	wv_vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
	wv_vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl, 0, 1, &set, 0, NULL);
	if (pushBytes) wv_vkCmdPushConstants(cb, pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, pushBytes, push);
	wv_vkCmdDispatch(cb, gx, gy, gz);
}

// wv_cmd_barrier makes all earlier transfer and shader writes visible to
// later transfers and shaders.
void wv_cmd_barrier(VkCommandBuffer cb) {
	VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
	mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
	mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
	VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
	wv_vkCmdPipelineBarrier(cb, st, st, 0, 1, &mb, 0, NULL, 0, NULL);
}

// wv_cmd_host_barrier makes the transfers' writes visible to host reads.
void wv_cmd_host_barrier(VkCommandBuffer cb) {
	VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
	mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
	mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
	wv_vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

void wv_cmd_copy(VkCommandBuffer cb, VkBuffer src, uint64_t srcOff, VkBuffer dst, uint64_t dstOff, uint64_t size) {
	VkBufferCopy c = {srcOff, dstOff, size};
	wv_vkCmdCopyBuffer(cb, src, dst, 1, &c);
}

VkResult wv_cmd_end(VkCommandBuffer cb) { return wv_vkEndCommandBuffer(cb); }

// wv_submit resets fence and submits cb to q, signalling fence when done.
VkResult wv_submit(VkDevice dev, VkQueue q, VkCommandBuffer cb, VkFence fence) {
	VkResult r = wv_vkResetFences(dev, 1, &fence);
	if (r != VK_SUCCESS) return r;
	VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
	si.commandBufferCount = 1;
	si.pCommandBuffers = &cb;
	return wv_vkQueueSubmit(q, 1, &si, fence);
}

// wv_wait waits up to timeout nanoseconds for fence (VK_TIMEOUT if not yet).
VkResult wv_wait(VkDevice dev, VkFence fence, uint64_t timeout) {
	return wv_vkWaitForFences(dev, 1, &fence, VK_TRUE, timeout);
}

#endif // WV_IMPL

#endif
