/*
 * How the server's XDP program is attached (--xdp-mode): a setting of the
 * test, named here so that a test's specification (spec/spec.h) holds it
 * without reaching up to the loader that attaches (loader/xdp_attach.h).
 */
#ifndef XP_SPEC_XDP_MODE_H
#define XP_SPEC_XDP_MODE_H

enum xp_xdp_mode { XP_XDP_AUTO = 0, XP_XDP_NATIVE, XP_XDP_SKB };

#endif
