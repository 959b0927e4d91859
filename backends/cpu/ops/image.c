/* SPDX-License-Identifier: MIT */
/*
 * CPU kernel: ImageDecoder, JPEG through libjpeg(-turbo) and PNG through
 * libpng's simplified API, to [H, W, C] uint8 as ONNX's reference (PIL)
 * gives it: RGB, BGR (RGB reversed), or Grayscale (a grayscale JPEG as it
 * is; colour converted with PIL's luma, (19595 R + 38470 G + 7471 B +
 * 2^15) >> 16). Other formats (BMP, PNM, TIFF, WebP, JPEG 2000) are refused
 * with ERT_STATUS_UNSUPPORTED naming the format (docs/onnx-support.md).
 * Images above ERT_IMAGE_MAX_PIXELS are refused before decoding.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

#include "cpu/cpu-impl.h"

/* 2^26 pixels (8192 x 8192): the decoded image and libjpeg's rows stay well below a GiB */
#define ERT_IMAGE_MAX_PIXELS (1ll << 26)

enum px { PX_RGB, PX_BGR, PX_GRAY };

static uint8_t luma(const uint8_t *rgb)
{
	return (uint8_t)((rgb[0] * 19595u + rgb[1] * 38470u + rgb[2] * 7471u + 0x8000u) >> 16);
}

/* Write @rgb (one row of @w pixels, 3 or 1 channels in) as @px to @out. */
static void put_row(const uint8_t *in, int in_ch, int64_t w, enum px px, uint8_t *out)
{
	for (int64_t i = 0; i < w; i++) {
		const uint8_t *p = in + i * in_ch;
		uint8_t rgb[3] = { p[0], p[in_ch > 1 ? 1 : 0], p[in_ch > 2 ? 2 : 0] };

		if (px == PX_GRAY) {
			out[i] = in_ch == 1 ? p[0] : luma(rgb);
		} else {
			out[3 * i] = rgb[px == PX_BGR ? 2 : 0];
			out[3 * i + 1] = rgb[1];
			out[3 * i + 2] = rgb[px == PX_BGR ? 0 : 2];
		}
	}
}

static ert_status output(struct ert_exec *x, int64_t h, int64_t w, enum px px, struct ert_err *err)
{
	int64_t dims[3] = { h, w, px == PX_GRAY ? 1 : 3 };

	if (h <= 0 || w <= 0 || h > ERT_IMAGE_MAX_PIXELS / w)
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT,
				     "a %lld x %lld image, at most %lld pixels", (long long)w,
				     (long long)h, ERT_IMAGE_MAX_PIXELS);
	return ert_exec_output(x, 0, 3, dims, err);
}

/* ---- JPEG ---- */

struct jpeg_fail {
	struct jpeg_error_mgr mgr;
	jmp_buf jump;
	char msg[JMSG_LENGTH_MAX];
};

/* libjpeg's default error_exit ends the process: return to the kernel instead */
static void jpeg_fail_exit(j_common_ptr c)
{
	struct jpeg_fail *f = (struct jpeg_fail *)c->err;

	c->err->format_message(c, f->msg);
	longjmp(f->jump, 1);
}

static void jpeg_quiet(j_common_ptr c, int level)
{
	(void)c;
	(void)level;
}

static ert_status decode_jpeg(struct ert_exec *x, const uint8_t *src, size_t n, enum px px,
			      struct ert_err *err)
{
	struct jpeg_decompress_struct d;
	struct jpeg_fail f;
	/* volatile: read after a longjmp from inside libjpeg */
	uint8_t *volatile row = NULL;
	volatile ert_status st = ERT_OK;

	memset(&d, 0, sizeof(d));
	d.err = jpeg_std_error(&f.mgr);
	f.mgr.error_exit = jpeg_fail_exit;
	f.mgr.emit_message = jpeg_quiet;
	if (setjmp(f.jump)) {
		ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT, "JPEG: %s", f.msg);
		jpeg_destroy_decompress(&d);
		free(row);
		return st != ERT_OK ? st : ERT_STATUS_INVALID_ARGUMENT;
	}
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, src, (unsigned long)n);
	jpeg_read_header(&d, TRUE);
	/* a grayscale JPEG stays gray (PIL opens it as L) and is widened for RGB/BGR */
	d.out_color_space = d.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
	st = output(x, (int64_t)d.image_height, (int64_t)d.image_width, px, err);
	if (st != ERT_OK) {
		jpeg_destroy_decompress(&d);
		return st;
	}
	jpeg_start_decompress(&d);
	row = malloc((size_t)d.output_width * (size_t)d.output_components);
	if (!row) {
		st = ERT_STATUS_OUT_OF_MEMORY;
		snprintf(f.msg, sizeof(f.msg), "out of memory");
		longjmp(f.jump, 1);
	}
	while (d.output_scanline < d.output_height) {
		JSAMPROW r = row;
		int64_t y = d.output_scanline;

		jpeg_read_scanlines(&d, &r, 1);
		put_row(row, d.output_components, d.output_width, px,
			(uint8_t *)x->out[0]->data + y * d.output_width * (px == PX_GRAY ? 1 : 3));
	}
	jpeg_finish_decompress(&d);
	jpeg_destroy_decompress(&d);
	free(row);
	return ERT_OK;
}

/* ---- PNG ---- */

static ert_status decode_png(struct ert_exec *x, const uint8_t *src, size_t n, enum px px,
			     struct ert_err *err)
{
	png_image im;
	uint8_t *rgb;
	ert_status st;

	memset(&im, 0, sizeof(im));
	im.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&im, src, n))
		return ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT, "PNG: %s",
				     im.message);
	st = output(x, im.height, im.width, px, err);
	if (st != ERT_OK) {
		png_image_free(&im);
		return st;
	}
	/* PIL's convert("RGB") drops alpha; libpng would blend it: refuse rather than differ */
	if (im.format & PNG_FORMAT_FLAG_ALPHA) {
		png_image_free(&im);
		return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
				     "PNG with an alpha channel");
	}
	im.format = PNG_FORMAT_RGB;
	rgb = malloc((size_t)PNG_IMAGE_SIZE(im));
	if (!rgb) {
		png_image_free(&im);
		return ert_node_fail(x->node, err, ERT_STATUS_OUT_OF_MEMORY, "out of memory");
	}
	if (!png_image_finish_read(&im, NULL, rgb, 0, NULL)) {
		st = ert_node_fail(x->node, err, ERT_STATUS_INVALID_ARGUMENT, "PNG: %s", im.message);
		free(rgb);
		return st;
	}
	for (uint32_t y = 0; y < im.height; y++)
		put_row(rgb + (size_t)y * im.width * 3, 3, im.width, px,
			(uint8_t *)x->out[0]->data + (size_t)y * im.width * (px == PX_GRAY ? 1 : 3));
	free(rgb);
	return ERT_OK;
}

/* The format from the first bytes; NULL for JPEG and PNG, which are decoded. */
static const char *other_format(const uint8_t *p, size_t n)
{
	if (n >= 2 && p[0] == 'B' && p[1] == 'M')
		return "BMP";
	if (n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7')
		return "PNM";
	if (n >= 4 && ((p[0] == 'I' && p[1] == 'I' && p[2] == 42) || (p[0] == 'M' && p[1] == 'M' && p[3] == 42)))
		return "TIFF";
	if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0)
		return "WebP";
	if (n >= 4 && ((p[0] == 0xff && p[1] == 0x4f && p[2] == 0xff && p[3] == 0x51) ||
		       (n >= 8 && memcmp(p + 4, "jP  ", 4) == 0)))
		return "JPEG 2000";
	return "an unknown";
}

static ert_status image_compute(struct ert_cpu *cpu, struct ert_exec *x, struct ert_err *err)
{
	const struct ert_value *in = x->in[0];
	const uint8_t *p = in->data;
	size_t n = (size_t)in->numel;
	const char *fmt = ert_attr_string(x->node, "pixel_format", "RGB");
	enum px px = strcmp(fmt, "BGR") == 0 ? PX_BGR : strcmp(fmt, "Grayscale") == 0 ? PX_GRAY : PX_RGB;

	if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
		return decode_jpeg(x, p, n, px, err);
	if (n >= 8 && png_sig_cmp(p, 0, 8) == 0)
		return decode_png(x, p, n, px, err);
	return ert_node_fail(x->node, err, ERT_STATUS_UNSUPPORTED,
			     "%s image; edgert decodes JPEG and PNG only", other_format(p, n));
}

const struct ert_cpu_op ert_cpu_ops_image[] = {
	{ .op = ERT_OP_ImageDecoder, .compute = image_compute },
	{ .compute = NULL },
};
