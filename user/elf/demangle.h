/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/demangle — the names people read for C++ and Rust symbols, through
 * libiberty's demangler (the one binutils' c++filt and nm -C use):
 *   _ZN2ns3Foo3barEi              -> ns::Foo::bar(int)
 *   _Z4workv.constprop.0          -> work() [clone .constprop.0]
 *   _ZN5panic11panic_inner17h..E  -> panic::panic_inner  (Rust, hash dropped)
 *   work.isra.0 (a C clone)       -> work [clone .isra.0]
 * Threads: any; libiberty's demangler keeps no state.
 */
#ifndef USER_DEMANGLE_H
#define USER_DEMANGLE_H

#include <stddef.h>

/*
 * The readable name of symbol name, or NULL when it reads as it is (a C
 * name, or not a mangled one). Memory: malloc'd, the caller frees it.
 */
char *demangle__name(const char *name);

/*
 * The length of the part of a demangled name before its parameter list
 * ("ns::Foo::bar(int) const" -> "ns::Foo::bar"), skipping template
 * arguments ("std::vector<int>::push_back(int const&)" keeps
 * "std::vector<int>::push_back"). strlen(name) when it has none.
 */
size_t demangle__base_len(const char *name);

#endif /* USER_DEMANGLE_H */
