/*
 * sanitizer.h — TIDE_ASAN is 1 when AddressSanitizer instruments the file being compiled: gcc
 * defines __SANITIZE_ADDRESS__, clang answers __has_feature(address_sanitizer). Caches that
 * would hide a use after free from ASan are off then.
 */
#ifndef TIDE_SANITIZER_H
#define TIDE_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define TIDE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TIDE_ASAN 1
#endif
#endif
#ifndef TIDE_ASAN
#define TIDE_ASAN 0
#endif

#endif
