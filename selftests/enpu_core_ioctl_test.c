// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 *
 * Every DRM core ioctl number on the accel node. An accel file has no
 * drm_master, and on 6.12 the core's GET_MAGIC and GET_UNIQUE dereference
 * it (a kernel Oops from one ioctl): enpu refuses every core ioctl but the
 * render-node set (version, capabilities, GEM_CLOSE, PRIME, syncobjs) with
 * EACCES. Each number of the core ranges (0x00-0x3f, 0xa0-0xff) is called
 * with its uAPI command and a zeroed argument of the right size where
 * drm.h defines one, and with a no-argument and a 256-byte zeroed command
 * of the same number: refused numbers must answer EACCES, allowed ones
 * anything but EACCES, and nothing may crash. Every number with another
 * ioctl type must answer ENOTTY (drm_compat_ioctl() does not check the
 * type, so a 32-bit 'x' ioctl numbered 1 reached GET_UNIQUE). Run as root
 * (which DRM authenticates and lets past ROOT_ONLY checks) and with
 * privileges dropped after opening the node. The same source built with -m32 is
 * enpu_core_ioctl32_test: a 32-bit process goes through compat_ioctl,
 * where drm_compat_ioctl() calls some core handlers without drm_ioctl().
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "enpu_lib.h"

#define CORE_ARG_MAX 4096

struct core_ioctl {
	unsigned long cmd;
	const char *name;
};

#define CORE(x) { DRM_IOCTL_##x, #x }

/* every core ioctl of 6.12's uapi drm.h (drm_mode.h's structs included) */
static const struct core_ioctl core_ioctls[] = {
	CORE(VERSION), CORE(GET_UNIQUE), CORE(GET_MAGIC), CORE(IRQ_BUSID),
	CORE(GET_MAP), CORE(GET_CLIENT), CORE(GET_STATS), CORE(SET_VERSION),
	CORE(MODESET_CTL), CORE(GEM_CLOSE), CORE(GEM_FLINK), CORE(GEM_OPEN),
	CORE(GET_CAP), CORE(SET_CLIENT_CAP), CORE(SET_UNIQUE), CORE(AUTH_MAGIC),
	CORE(BLOCK), CORE(UNBLOCK), CORE(CONTROL), CORE(ADD_MAP), CORE(ADD_BUFS),
	CORE(MARK_BUFS), CORE(INFO_BUFS), CORE(MAP_BUFS), CORE(FREE_BUFS),
	CORE(RM_MAP), CORE(SET_SAREA_CTX), CORE(GET_SAREA_CTX), CORE(SET_MASTER),
	CORE(DROP_MASTER), CORE(ADD_CTX), CORE(RM_CTX), CORE(MOD_CTX),
	CORE(GET_CTX), CORE(SWITCH_CTX), CORE(NEW_CTX), CORE(RES_CTX),
	CORE(ADD_DRAW), CORE(RM_DRAW), CORE(DMA), CORE(LOCK), CORE(UNLOCK),
	CORE(FINISH), CORE(PRIME_HANDLE_TO_FD), CORE(PRIME_FD_TO_HANDLE),
	CORE(AGP_ACQUIRE), CORE(AGP_RELEASE), CORE(AGP_ENABLE), CORE(AGP_INFO),
	CORE(AGP_ALLOC), CORE(AGP_FREE), CORE(AGP_BIND), CORE(AGP_UNBIND),
	CORE(SG_ALLOC), CORE(SG_FREE), CORE(WAIT_VBLANK), CORE(CRTC_GET_SEQUENCE),
	CORE(CRTC_QUEUE_SEQUENCE), CORE(UPDATE_DRAW),
	CORE(MODE_GETRESOURCES), CORE(MODE_GETCRTC), CORE(MODE_SETCRTC),
	CORE(MODE_CURSOR), CORE(MODE_GETGAMMA), CORE(MODE_SETGAMMA),
	CORE(MODE_GETENCODER), CORE(MODE_GETCONNECTOR), CORE(MODE_ATTACHMODE),
	CORE(MODE_DETACHMODE), CORE(MODE_GETPROPERTY), CORE(MODE_SETPROPERTY),
	CORE(MODE_GETPROPBLOB), CORE(MODE_GETFB), CORE(MODE_ADDFB), CORE(MODE_RMFB),
	CORE(MODE_PAGE_FLIP), CORE(MODE_DIRTYFB), CORE(MODE_CREATE_DUMB),
	CORE(MODE_MAP_DUMB), CORE(MODE_DESTROY_DUMB), CORE(MODE_GETPLANERESOURCES),
	CORE(MODE_GETPLANE), CORE(MODE_SETPLANE), CORE(MODE_ADDFB2),
	CORE(MODE_OBJ_GETPROPERTIES), CORE(MODE_OBJ_SETPROPERTY), CORE(MODE_CURSOR2),
	CORE(MODE_ATOMIC), CORE(MODE_CREATEPROPBLOB), CORE(MODE_DESTROYPROPBLOB),
	CORE(SYNCOBJ_CREATE), CORE(SYNCOBJ_DESTROY), CORE(SYNCOBJ_HANDLE_TO_FD),
	CORE(SYNCOBJ_FD_TO_HANDLE), CORE(SYNCOBJ_WAIT), CORE(SYNCOBJ_RESET),
	CORE(SYNCOBJ_SIGNAL), CORE(MODE_CREATE_LEASE), CORE(MODE_LIST_LESSEES),
	CORE(MODE_GET_LEASE), CORE(MODE_REVOKE_LEASE), CORE(SYNCOBJ_TIMELINE_WAIT),
	CORE(SYNCOBJ_QUERY), CORE(SYNCOBJ_TRANSFER), CORE(SYNCOBJ_TIMELINE_SIGNAL),
	CORE(MODE_GETFB2),
	/* newer than some libdrm copies of drm.h: by number and size (6.12) */
	{ _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, 0xCF, 24), "SYNCOBJ_EVENTFD" },
	{ _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, 0xD0, 8), "MODE_CLOSEFB" },
};

/* what the accel node offers: the core ioctls 6.12 allows on render nodes */
static const unsigned long allowed[] = {
	DRM_IOCTL_VERSION, DRM_IOCTL_GET_CAP, DRM_IOCTL_GEM_CLOSE,
	DRM_IOCTL_PRIME_HANDLE_TO_FD, DRM_IOCTL_PRIME_FD_TO_HANDLE,
	DRM_IOCTL_SYNCOBJ_CREATE, DRM_IOCTL_SYNCOBJ_DESTROY,
	DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE,
	DRM_IOCTL_SYNCOBJ_TRANSFER, DRM_IOCTL_SYNCOBJ_WAIT,
	DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, DRM_IOWR(0xCF, char), /* SYNCOBJ_EVENTFD */
	DRM_IOCTL_SYNCOBJ_RESET, DRM_IOCTL_SYNCOBJ_SIGNAL,
	DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, DRM_IOCTL_SYNCOBJ_QUERY,
};

static int is_allowed(unsigned int nr)
{
	size_t i;

	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (_IOC_NR(allowed[i]) == nr)
			return 1;
	return 0;
}

static const struct core_ioctl *known(unsigned int nr)
{
	size_t i;

	for (i = 0; i < sizeof(core_ioctls) / sizeof(core_ioctls[0]); i++)
		if (_IOC_NR(core_ioctls[i].cmd) == nr)
			return &core_ioctls[i];
	return NULL;
}

FIXTURE(core) {
	int fd;
	uint8_t *arg;
};

FIXTURE_VARIANT(core) {
	int drop_privileges;
};

FIXTURE_VARIANT_ADD(core, root) {
	.drop_privileges = 0,
};

/* opened by root, then uid/gid nobody: no CAP_SYS_ADMIN at ioctl time */
FIXTURE_VARIANT_ADD(core, unprivileged) {
	.drop_privileges = 1,
};

FIXTURE_SETUP(core)
{
	self->arg = MAP_FAILED;
	self->fd = enpu_open();
	if (self->fd < 0)
		SKIP(return, "no enpu device (is enpu.ko loaded?)");
	self->arg = mmap(NULL, CORE_ARG_MAX, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(self->arg != MAP_FAILED);
	if (variant->drop_privileges) {
		/* each test runs in its own child: this does not leak */
		ASSERT_EQ(0, setresgid(65534, 65534, 65534));
		ASSERT_EQ(0, setresuid(65534, 65534, 65534));
	}
}

FIXTURE_TEARDOWN(core)
{
	if (self->arg != MAP_FAILED)
		munmap(self->arg, CORE_ARG_MAX);
	if (self->fd >= 0)
		close(self->fd);
}

/* one call with a zeroed argument; returns 0 or -errno, never retries */
static int call(int fd, unsigned long cmd, uint8_t *arg)
{
	memset(arg, 0, CORE_ARG_MAX);
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static int check(struct __test_metadata *_metadata, int fd, uint8_t *arg,
		 unsigned int nr, unsigned long cmd, const char *name)
{
	int ret = call(fd, cmd, arg);

	if (is_allowed(nr)) {
		if (ret == -EACCES)
			TH_LOG("core ioctl 0x%02x %s (cmd 0x%lx) refused but allowed",
			       nr, name, cmd);
		return ret != -EACCES;
	}
	if (ret != -EACCES)
		TH_LOG("core ioctl 0x%02x %s (cmd 0x%lx) returned %d, not -EACCES",
		       nr, name, cmd, ret);
	return ret == -EACCES;
}

TEST_F(core, every_core_ioctl_number)
{
	unsigned int nr, refused = 0, reached = 0;
	int good = 1, ret;

	for (nr = 0; nr < 0x100; nr++) {
		const struct core_ioctl *k = known(nr);
		const char *name = k ? k->name : "(unassigned)";

		/* the same number with another type is no DRM ioctl at all */
		ret = call(self->fd, _IOC(_IOC_READ | _IOC_WRITE, 'x', nr, 256), self->arg);
		if (ret != -ENOTTY) {
			TH_LOG("ioctl type 'x' number 0x%02x returned %d, not -ENOTTY", nr, ret);
			good = 0;
		}
		if (nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END)
			continue;
		if (k)
			good &= check(_metadata, self->fd, self->arg, nr, k->cmd, name);
		good &= check(_metadata, self->fd, self->arg, nr, DRM_IO(nr), name);
		good &= check(_metadata, self->fd, self->arg, nr,
			      _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, nr, 256), name);
		if (is_allowed(nr))
			reached++;
		else
			refused++;
	}
	ASSERT_TRUE(good);
	ASSERT_EQ(17, reached);
	ASSERT_EQ(0x40 + 0x60 - 17, refused);
}

/* the two of the report, and the other master/authentication ioctls */
TEST_F(core, magic_unique_master_auth_refused)
{
	struct drm_auth auth = { 0 };
	char buf[64];
	struct drm_unique u = { .unique_len = sizeof(buf), .unique = buf };
	struct drm_gem_flink flink = { 0 };
	struct drm_gem_open gopen = { .name = 1 };
	struct drm_set_version sv = { -1, -1, -1, -1 };
	uint32_t h;

	ASSERT_EQ(-EACCES, enpu_ioctl(self->fd, DRM_IOCTL_GET_MAGIC, &auth));
	ASSERT_EQ(0, auth.magic);
	ASSERT_EQ(-EACCES, enpu_ioctl(self->fd, DRM_IOCTL_GET_UNIQUE, &u));
	ASSERT_EQ(-EACCES, enpu_ioctl(self->fd, DRM_IOCTL_SET_UNIQUE, &u));
	ASSERT_EQ(-EACCES, enpu_ioctl(self->fd, DRM_IOCTL_AUTH_MAGIC, &auth));
	ASSERT_EQ(-EACCES, enpu_ioctl(self->fd, DRM_IOCTL_SET_MASTER, NULL));
	ASSERT_EQ(-EACCES, enpu_ioctl(self->fd, DRM_IOCTL_DROP_MASTER, NULL));
	ASSERT_EQ(-EACCES, enpu_ioctl(self->fd, DRM_IOCTL_SET_VERSION, &sv));
	/* no global GEM names: a BO is shared through PRIME only */
	ASSERT_EQ(0, enpu_bo_new(self->fd, 4096, &h));
	flink.handle = h;
	ASSERT_EQ(-EACCES, enpu_ioctl(self->fd, DRM_IOCTL_GEM_FLINK, &flink));
	ASSERT_EQ(0, flink.name);
	ASSERT_EQ(-EACCES, enpu_ioctl(self->fd, DRM_IOCTL_GEM_OPEN, &gopen));
	ASSERT_EQ(0, enpu_bo_close(self->fd, h));
}

TEST_F(core, allowed_core_ioctls_work)
{
	struct drm_get_cap cap = { .capability = DRM_CAP_SYNCOBJ_TIMELINE };
	struct drm_version v = { 0 };
	char name[16] = { 0 };
	uint32_t h, s;

	v.name = name;
	v.name_len = sizeof(name) - 1;
	ASSERT_EQ(0, enpu_ioctl(self->fd, DRM_IOCTL_VERSION, &v));
	ASSERT_STREQ("enpu", name);
	ASSERT_EQ(ENPU_UAPI_VERSION_MAJOR, v.version_major);
	ASSERT_EQ(0, enpu_ioctl(self->fd, DRM_IOCTL_GET_CAP, &cap));
	ASSERT_EQ(1, cap.value);
	cap.capability = DRM_CAP_PRIME;
	ASSERT_EQ(0, enpu_ioctl(self->fd, DRM_IOCTL_GET_CAP, &cap));
	ASSERT_EQ(DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT, cap.value);
	/* KMS capabilities: the core's own answer, not the filter's */
	cap.capability = DRM_CAP_DUMB_BUFFER;
	ASSERT_EQ(-EOPNOTSUPP, enpu_ioctl(self->fd, DRM_IOCTL_GET_CAP, &cap));
	ASSERT_EQ(0, enpu_syncobj_new(self->fd, DRM_SYNCOBJ_CREATE_SIGNALED, &s));
	ASSERT_EQ(0, enpu_syncobj_wait(self->fd, s, 1000000000ll));
	ASSERT_EQ(0, enpu_syncobj_destroy(self->fd, s));
	ASSERT_EQ(0, enpu_bo_new(self->fd, 4096, &h));
	ASSERT_EQ(0, enpu_bo_close(self->fd, h));
	ASSERT_EQ(-EINVAL, enpu_bo_close(self->fd, h));
}

TEST_F(core, driver_and_foreign_ioctls_pass_through)
{
	struct drm_enpu_query q = { .type = DRM_ENPU_QUERY_DEVICE };

	/* the driver's range goes to the driver's table unchanged */
	ASSERT_EQ(0, enpu_query_raw(self->fd, &q));
	ASSERT_EQ(sizeof(struct drm_enpu_query_device), q.size);
	/* numbers past the driver's table: the core's EINVAL, not the filter's */
	ASSERT_EQ(-EINVAL, call(self->fd, DRM_IOWR(DRM_COMMAND_END - 1,
						   struct drm_enpu_submit), self->arg));
	ASSERT_EQ(-EINVAL, call(self->fd, DRM_IO(DRM_COMMAND_END - 1), self->arg));
	/* not a DRM ioctl at all: the core's ENOTTY */
	ASSERT_EQ(-ENOTTY, call(self->fd, _IOWR('x', 0x00, struct drm_version), self->arg));
}

TEST_HARNESS_MAIN
