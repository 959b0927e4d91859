/* SPDX-License-Identifier: MIT */
/*
 * ImageDecoder (backends/cpu/ops/image.c): PNG and JPEG images made here
 * with libpng and libjpeg decode back to their pixels (PNG exactly, JPEG
 * within its loss), in RGB, BGR and Grayscale; damaged, huge and
 * unsupported images are refused with a message, never a crash.
 */
#include "ert-op-test.h"
#include "ert-test.h"

#include <jpeglib.h>
#include <png.h>

enum { W = 13, H = 7 };

static void pattern(uint8_t *rgb)
{
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			uint8_t *p = rgb + 3 * (y * W + x);

			p[0] = (uint8_t)(x * 19);
			p[1] = (uint8_t)(y * 35);
			p[2] = (uint8_t)(255 - x * 9 - y * 5);
		}
}

static uint8_t *make_png(const uint8_t *rgb, size_t *n)
{
	png_image im;
	png_alloc_size_t size = 0;
	uint8_t *buf;

	memset(&im, 0, sizeof(im));
	im.version = PNG_IMAGE_VERSION;
	im.width = W;
	im.height = H;
	im.format = PNG_FORMAT_RGB;
	if (!png_image_write_get_memory_size(im, size, 0, rgb, 0, NULL))
		return NULL;
	buf = malloc(size);
	if (buf && !png_image_write_to_memory(&im, buf, &size, 0, rgb, 0, NULL)) {
		free(buf);
		return NULL;
	}
	*n = size;
	return buf;
}

static uint8_t *make_jpeg(const uint8_t *rgb, size_t *n)
{
	struct jpeg_compress_struct c;
	struct jpeg_error_mgr e;
	unsigned char *buf = NULL;
	unsigned long size = 0;

	c.err = jpeg_std_error(&e);
	jpeg_create_compress(&c);
	jpeg_mem_dest(&c, &buf, &size);
	c.image_width = W;
	c.image_height = H;
	c.input_components = 3;
	c.in_color_space = JCS_RGB;
	jpeg_set_defaults(&c);
	jpeg_set_quality(&c, 98, TRUE);
	jpeg_start_compress(&c, TRUE);
	while (c.next_scanline < H) {
		JSAMPROW r = (JSAMPROW)(rgb + 3 * W * c.next_scanline);

		jpeg_write_scanlines(&c, &r, 1);
	}
	jpeg_finish_compress(&c);
	jpeg_destroy_compress(&c);
	*n = size;
	return buf;
}

static ert_status decode(struct one *o, const uint8_t *img, size_t n, const char *fmt)
{
	int64_t len = (int64_t)n;

	one_init(o, ERT_OP_ImageDecoder, 20, 1, 1);
	ert_node_set_attr_string(o->g, o->n, "pixel_format", fmt);
	set_in(o, 0, ERT_DTYPE_UINT8, 1, &len, img);
	return one_run(o);
}

static uint8_t gray(const uint8_t *p)
{
	return (uint8_t)((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
}

ERT_TEST(png_exact)
{
	uint8_t rgb[3 * W * H];
	size_t n = 0;
	uint8_t *png;
	struct one o;

	pattern(rgb);
	png = make_png(rgb, &n);
	REQUIRE(png);
	REQUIRE(decode(&o, png, n, "RGB") == ERT_OK);
	CHECK(o.out[0].rank == 3 && o.out[0].dims[0] == H && o.out[0].dims[1] == W &&
	      o.out[0].dims[2] == 3);
	CHECK(memcmp(o.out[0].data, rgb, sizeof(rgb)) == 0);
	one_fini(&o);
	REQUIRE(decode(&o, png, n, "BGR") == ERT_OK);
	CHECK(((uint8_t *)o.out[0].data)[0] == rgb[2] && ((uint8_t *)o.out[0].data)[5] == rgb[3]);
	one_fini(&o);
	REQUIRE(decode(&o, png, n, "Grayscale") == ERT_OK);
	CHECK(o.out[0].dims[2] == 1);
	for (int i = 0; i < W * H; i++)
		CHECK(((uint8_t *)o.out[0].data)[i] == gray(rgb + 3 * i));
	one_fini(&o);
	free(png);
}

ERT_TEST(jpeg_close)
{
	uint8_t rgb[3 * W * H];
	size_t n = 0;
	uint8_t *jpg;
	struct one o;
	int worst = 0;

	pattern(rgb);
	jpg = make_jpeg(rgb, &n);
	REQUIRE(jpg);
	REQUIRE(decode(&o, jpg, n, "RGB") == ERT_OK);
	REQUIRE(o.out[0].dims[0] == H && o.out[0].dims[1] == W);
	for (size_t i = 0; i < sizeof(rgb); i++) {
		int d = abs((int)((uint8_t *)o.out[0].data)[i] - rgb[i]);

		worst = d > worst ? d : worst;
	}
	CHECK(worst <= 24); /* quality 98 with 4:2:0 chroma on a 13 x 7 gradient */
	one_fini(&o);
	/* truncated: libjpeg's error comes back as a status, the process lives on */
	CHECK_EQ_INT(decode(&o, jpg, n / 3, "RGB"), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(o.err.msg, "JPEG") != NULL);
	one_fini(&o);
	/* a header claiming 65000 x 65000 pixels is refused before decoding */
	for (size_t i = 0; i + 8 < n; i++)
		if (jpg[i] == 0xff && jpg[i + 1] == 0xc0) { /* SOF0: height, width at +5, +7 */
			jpg[i + 5] = jpg[i + 7] = 0xfd;
			jpg[i + 6] = jpg[i + 8] = 0xe8;
			break;
		}
	CHECK_EQ_INT(decode(&o, jpg, n, "RGB"), ERT_STATUS_INVALID_ARGUMENT);
	CHECK(strstr(o.err.msg, "pixels") != NULL);
	one_fini(&o);
	free(jpg);
}

ERT_TEST(other_formats_refused)
{
	static const uint8_t bmp[16] = { 'B', 'M', 1, 2, 3 };
	static const uint8_t junk[5] = { 1, 2, 3, 4, 5 };
	struct one o;

	CHECK_EQ_INT(decode(&o, bmp, sizeof(bmp), "RGB"), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "BMP image") != NULL);
	one_fini(&o);
	CHECK_EQ_INT(decode(&o, junk, sizeof(junk), "RGB"), ERT_STATUS_UNSUPPORTED);
	CHECK(strstr(o.err.msg, "unknown image") != NULL);
	one_fini(&o);
	/* an unknown pixel format is a model error */
	CHECK_EQ_INT(decode(&o, junk, sizeof(junk), "CMYK"), ERT_STATUS_INVALID_MODEL);
	one_fini(&o);
}

ERT_TEST_MAIN(ERT_TEST_ENTRY(png_exact), ERT_TEST_ENTRY(jpeg_close),
	      ERT_TEST_ENTRY(other_formats_refused))
