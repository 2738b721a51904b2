#include "cache/key.h"

#include "base/error.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xxhash.h>

#include <cmocka.h>

static gb_key key_of_strs(const char *kind, const char *a, const char *b)
{
    gb_keybuf kb;
    gb_key key;
    gb_key_begin(&kb, kind);
    gb_key_add_str(&kb, a);
    gb_key_add_str(&kb, b);
    assert_int_equal(gb_key_finish(&kb, &key), GB_OK);
    return key;
}

static gb_key key_of_f64(double v)
{
    gb_keybuf kb;
    gb_key key;
    gb_key_begin(&kb, "f");
    gb_key_add_f64(&kb, v);
    assert_int_equal(gb_key_finish(&kb, &key), GB_OK);
    return key;
}

static void assert_keys_equal(const gb_key *a, const gb_key *b)
{
    assert_memory_equal(a->bytes, b->bytes, GB_KEY_BYTES);
}

static void assert_keys_differ(const gb_key *a, const gb_key *b)
{
    assert_memory_not_equal(a->bytes, b->bytes, GB_KEY_BYTES);
}

static void test_same_fields_give_the_same_key(void **state)
{
    gb_key a = key_of_strs("best", "gemm", "sm_90");
    gb_key b = key_of_strs("best", "gemm", "sm_90");
    assert_keys_equal(&a, &b);
}

static void test_field_boundaries_change_the_key(void **state)
{
    gb_key a = key_of_strs("best", "ab", "c");
    gb_key b = key_of_strs("best", "a", "bc");
    assert_keys_differ(&a, &b);
}

static void test_string_and_integer_of_same_text_differ(void **state)
{
    gb_keybuf kb;
    gb_key as_str, as_int;
    gb_key_begin(&kb, "trial");
    gb_key_add_str(&kb, "8");
    assert_int_equal(gb_key_finish(&kb, &as_str), GB_OK);
    gb_key_begin(&kb, "trial");
    gb_key_add_i64(&kb, 8);
    assert_int_equal(gb_key_finish(&kb, &as_int), GB_OK);
    assert_keys_differ(&as_str, &as_int);
}

static void test_string_and_bytes_differ_and_null_differs_from_empty(void **state)
{
    gb_keybuf kb;
    gb_key as_str, as_bytes, empty, null;
    gb_key_begin(&kb, "k");
    gb_key_add_str(&kb, "abc");
    assert_int_equal(gb_key_finish(&kb, &as_str), GB_OK);
    gb_key_begin(&kb, "k");
    gb_key_add_bytes(&kb, "abc", 3);
    assert_int_equal(gb_key_finish(&kb, &as_bytes), GB_OK);
    assert_keys_differ(&as_str, &as_bytes);
    empty = key_of_strs("k", "", "");
    null = key_of_strs("k", NULL, "");
    assert_keys_differ(&empty, &null);
}

static void test_kinds_never_collide(void **state)
{
    gb_key best = key_of_strs("best", "gemm", "x");
    gb_key trial = key_of_strs("trial", "gemm", "x");
    assert_keys_differ(&best, &trial);
}

static void test_negative_zero_is_encoded_as_zero(void **state)
{
    gb_key pos = key_of_f64(0.0), neg = key_of_f64(-0.0);
    assert_keys_equal(&pos, &neg);
    gb_key one = key_of_f64(1.0);
    assert_keys_differ(&pos, &one);
}

static void test_every_nan_gives_one_key(void **state)
{
    uint64_t bits = 0x7ff0000000000123ull; /* a signalling NaN with a payload */
    double odd;
    memcpy(&odd, &bits, sizeof odd);
    gb_key a = key_of_f64(NAN), b = key_of_f64(odd), c = key_of_f64(-NAN);
    assert_keys_equal(&a, &b);
    assert_keys_equal(&a, &c);
}

static void test_hex_round_trips(void **state)
{
    gb_key key = key_of_strs("cubin", "src", "opts"), back;
    char hex[2 * GB_KEY_BYTES + 1];
    gb_key_hex(&key, hex);
    assert_int_equal(strlen(hex), 32);
    assert_int_equal(strspn(hex, "0123456789abcdef"), 32);
    assert_int_equal(gb_key_from_hex(hex, &back), GB_OK);
    assert_keys_equal(&key, &back);
}

static void test_hex_parsing_accepts_upper_case_and_refuses_junk(void **state)
{
    gb_key key;
    const char *upper = "00112233445566778899AABBCCDDEEFF";
    assert_int_equal(gb_key_from_hex(upper, &key), GB_OK);
    assert_int_equal(key.bytes[0], 0x00);
    assert_int_equal(key.bytes[15], 0xff);
    assert_int_equal(gb_key_from_hex("0011", &key), GB_EINVAL);
    assert_int_equal(gb_key_from_hex("00112233445566778899aabbccddeeff0", &key), GB_EINVAL);
    assert_int_equal(gb_key_from_hex("0011223344556677889gaabbccddeeff", &key), GB_EINVAL);
    assert_int_equal(gb_key_from_hex("", &key), GB_EINVAL);
    assert_int_equal(gb_key_from_hex(NULL, &key), GB_EINVAL);
}

/* The encoding of kind "t" and the integer 1, written out by hand. */
static const uint8_t tiny_encoding[] = {
    0x01, 0, 0, 0, 0, 0, 0, 0, 1, 't', /* string "t" */
    0x03, 0, 0, 0, 0, 0, 0, 0, 1,      /* i64 1, big-endian */
};

static void test_key_is_canonical_big_endian_xxh3_of_the_encoding(void **state)
{
    gb_keybuf kb;
    gb_key key;
    gb_key_begin(&kb, "t");
    gb_key_add_i64(&kb, 1);
    assert_int_equal(gb_key_finish(&kb, &key), GB_OK);

    XXH128_hash_t hash = XXH3_128bits(tiny_encoding, sizeof tiny_encoding);
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, hash);
    assert_memory_equal(key.bytes, canonical.digest, GB_KEY_BYTES);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(key.bytes[i], (uint8_t)(hash.high64 >> (56 - 8 * i)));
        assert_int_equal(key.bytes[8 + i], (uint8_t)(hash.low64 >> (56 - 8 * i)));
    }
}

static void test_key_of_bytes_is_plain_xxh3(void **state)
{
    gb_key key = gb_key_of_bytes("hello", 5);
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits("hello", 5));
    assert_memory_equal(key.bytes, canonical.digest, GB_KEY_BYTES);
    gb_key empty = gb_key_of_bytes(NULL, 0);
    XXH128_canonicalFromHash(&canonical, XXH3_128bits("", 0));
    assert_memory_equal(empty.bytes, canonical.digest, GB_KEY_BYTES);
}

/* Pinned: if this changes, every cache on disk is silently orphaned. Change the
 * encoding only together with GB_CACHE_SCHEMA. */
static void test_encoding_is_pinned(void **state)
{
    gb_keybuf kb;
    gb_key key;
    char hex[2 * GB_KEY_BYTES + 1];
    gb_key_begin(&kb, "best");
    gb_key_add_str(&kb, "gemm");
    gb_key_add_i64(&kb, -42);
    gb_key_add_f64(&kb, 1.5);
    gb_key_add_bytes(&kb, "\x00\xff", 2);
    assert_int_equal(gb_key_finish(&kb, &key), GB_OK);
    gb_key_hex(&key, hex);
    assert_string_equal(hex, "5853595333d7657ac3b7f06a53e9762b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_fields_give_the_same_key),
        cmocka_unit_test(test_field_boundaries_change_the_key),
        cmocka_unit_test(test_string_and_integer_of_same_text_differ),
        cmocka_unit_test(test_string_and_bytes_differ_and_null_differs_from_empty),
        cmocka_unit_test(test_kinds_never_collide),
        cmocka_unit_test(test_negative_zero_is_encoded_as_zero),
        cmocka_unit_test(test_every_nan_gives_one_key),
        cmocka_unit_test(test_hex_round_trips),
        cmocka_unit_test(test_hex_parsing_accepts_upper_case_and_refuses_junk),
        cmocka_unit_test(test_key_is_canonical_big_endian_xxh3_of_the_encoding),
        cmocka_unit_test(test_key_of_bytes_is_plain_xxh3),
        cmocka_unit_test(test_encoding_is_pinned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
