/* RFC 2544 searches and trial verdicts; see search.h. Pure: no I/O, no clock. */
#include "search/search.h"

#include <math.h>

#define L1_OVERHEAD 20u /* preamble 7, SFD 1, inter-frame gap 12 */

static double loss_of(uint64_t sent, uint64_t received)
{
	if (!sent || received >= sent)
		return 0;
	return 100.0 * (double)(sent - received) / (double)sent;
}

double xp_rfc_dir_loss_pct(const struct xp_rfc_trial *t, bool rev)
{
	return rev ? loss_of(t->rev.sent, t->rev.received) : loss_of(t->sent, t->received);
}

double xp_rfc_loss_pct(const struct xp_rfc_trial *t)
{
	double a = xp_rfc_dir_loss_pct(t, false);
	if (!t->rev.on)
		return a;
	double b = xp_rfc_dir_loss_pct(t, true);
	return a > b ? a : b;
}

static enum xp_rfc_verdict judge_one(int error, uint64_t sent, uint64_t received, bool short_of_target,
				     double loss_tol_pct)
{
	if (error || !sent)
		return XP_RFC_ERROR;
	if (short_of_target)
		return XP_RFC_SHORT;
	/* Zero tolerance means zero frames, not "below some rounding". */
	if (loss_tol_pct <= 0 ? received < sent : loss_of(sent, received) > loss_tol_pct)
		return XP_RFC_LOSS;
	return XP_RFC_PASS;
}

enum xp_rfc_verdict xp_rfc_judge_dir(const struct xp_rfc_trial *t, bool rev, double loss_tol_pct)
{
	if (rev)
		return judge_one(t->rev.error, t->rev.sent, t->rev.received, t->rev.short_of_target, loss_tol_pct);
	return judge_one(t->error, t->sent, t->received, t->short_of_target, loss_tol_pct);
}

enum xp_rfc_verdict xp_rfc_judge(const struct xp_rfc_trial *t, double loss_tol_pct)
{
	enum xp_rfc_verdict v = xp_rfc_judge_dir(t, false, loss_tol_pct);
	if (!t->rev.on)
		return v;
	enum xp_rfc_verdict r = xp_rfc_judge_dir(t, true, loss_tol_pct);
	/* The enum's order is the precedence: pass < loss < short < error. */
	return r > v ? r : v;
}

const char *xp_rfc_verdict_name(enum xp_rfc_verdict v)
{
	switch (v) {
	case XP_RFC_PASS: return "pass";
	case XP_RFC_LOSS: return "loss";
	case XP_RFC_SHORT: return "short";
	default: return "error";
	}
}

void xp_rfc_search_init(struct xp_rfc_search *s, double floor_pps, double max_pps, double res_pct, double loss_tol_pct)
{
	*s = (struct xp_rfc_search){ 0 };
	s->max_pps = max_pps > 0 ? max_pps : 0;
	s->floor_pps = floor_pps > 0 && floor_pps < s->max_pps ? floor_pps : 0;
	s->res_pct = res_pct > 0 ? res_pct : 0.5;
	s->loss_tol_pct = loss_tol_pct;
	s->lo = s->floor_pps;
	s->hi = s->max_pps;
	s->done = s->max_pps <= 0;
}

void xp_rfc_search_confirm(struct xp_rfc_search *s, unsigned n)
{
	s->confirm = n;
	s->left = n;
}

static bool by_sender(const struct xp_rfc_trial *t)
{
	/* --bidir: who held back the direction that fell short (A->B first). */
	const char *h = t->rev.on && !t->short_of_target && t->rev.short_of_target ? t->rev.held_back_by : t->held_back_by;
	return h && (h[0] == 's' || h[0] == 'k'); /* "sender", "kernel" */
}

/* A run worth running again: it lost frames or fell short of its target (search.h says why either). */
static bool again_worth(const struct xp_rfc_trial *t)
{
	enum xp_rfc_verdict v = xp_rfc_judge(t, 0);
	return v == XP_RFC_LOSS || v == XP_RFC_SHORT;
}

bool xp_rfc_search_repeating(const struct xp_rfc_search *s)
{
	return !s->done && s->repeating;
}

double xp_rfc_search_next(const struct xp_rfc_search *s)
{
	if (s->done)
		return 0;
	if (s->repeating)
		return s->held.target_pps;
	if (!s->trials)
		return s->max_pps;
	return (s->lo + s->hi) / 2;
}

enum xp_rfc_verdict xp_rfc_search_record(struct xp_rfc_search *s, const struct xp_rfc_trial *tr)
{
	enum xp_rfc_verdict v0 = xp_rfc_judge(tr, 0);
	if (v0 == XP_RFC_ERROR) {
		s->trials++;
		s->done = true; /* nothing to go on: the caller reports the error */
		return v0;
	}
	/* The current rate's runs: keep the best, a pass before a loss (the least) before a short run. */
	if (s->repeating) {
		s->repeats++;
		enum xp_rfc_verdict vh = xp_rfc_judge(&s->held, 0);
		if (v0 == XP_RFC_PASS || (v0 == XP_RFC_LOSS && vh == XP_RFC_SHORT) ||
		    (vh == XP_RFC_LOSS && v0 == XP_RFC_LOSS && xp_rfc_loss_pct(tr) < xp_rfc_loss_pct(&s->held)))
			s->held = *tr;
		if (v0 == XP_RFC_PASS)
			s->passed_on_repeat++;
	} else {
		s->held = *tr;
	}
	if (again_worth(&s->held) && s->left) {
		s->left--;
		s->repeating = true;
		return v0;
	}
	s->repeating = false;
	s->left = s->confirm;
	const struct xp_rfc_trial *t = &s->held;
	enum xp_rfc_verdict v = xp_rfc_judge(t, 0), vp = xp_rfc_judge(t, s->loss_tol_pct);
	double rate = t->target_pps;
	s->trials++;
	if (vp == XP_RFC_PASS && rate > s->pdr_pps)
		s->pdr_pps = rate;
	if (v == XP_RFC_PASS) {
		if (rate > s->ndr_pps) {
			s->ndr_pps = rate;
			s->ndr_offered = t->offered_pps;
		}
		s->lo = rate;
		s->lo_tested = true;
		if (s->trials == 1) /* the maximum passed */
			s->done = true;
	} else {
		s->hi = rate;
		s->hi_by_sender = v == XP_RFC_SHORT && by_sender(t);
		if (v == XP_RFC_SHORT) {
			s->shorts++;
			if (s->hi_by_sender)
				s->sender_shorts++;
		}
	}
	/* Relative to the failing bound: a 100 kpps limit is found to 0.5 % of
	 * 100 kpps, not of the sender's 3 Mpps maximum. */
	if (s->hi - s->lo <= s->hi * s->res_pct / 100 || s->hi - s->lo < 1)
		s->done = true;
	return v;
}

bool xp_rfc_search_sender_limited(const struct xp_rfc_search *s, bool max_is_sender)
{
	if (!s->trials)
		return false;
	/* The sender's own maximum passed: the device took everything it was given. */
	if (s->lo_tested && s->ndr_pps >= s->max_pps)
		return max_is_sender;
	return s->hi_by_sender;
}

void xp_rfc_flr_init(struct xp_rfc_flr *f, double max_pps)
{
	*f = (struct xp_rfc_flr){ .max_pps = max_pps, .done = max_pps <= 0 };
}

double xp_rfc_flr_next(const struct xp_rfc_flr *f)
{
	if (f->done)
		return 0;
	return f->max_pps * (10 - f->step) / 10.0;
}

void xp_rfc_flr_record(struct xp_rfc_flr *f, const struct xp_rfc_trial *t)
{
	if (t->error) {
		f->done = true;
		return;
	}
	/* "Lose nothing" is about frames: a short trial that lost none still counts (its rate is reported). */
	f->clean_in_row = t->sent && t->received >= t->sent ? f->clean_in_row + 1 : 0;
	f->step++;
	if (f->clean_in_row >= 2 || f->step >= 10)
		f->done = true;
}

void xp_rfc_b2b_init(struct xp_rfc_b2b *b, uint64_t max_burst, uint64_t res_frames)
{
	*b = (struct xp_rfc_b2b){ .lo = 0, .hi = max_burst, .max_burst = max_burst, .res = res_frames ? res_frames : 1 };
	b->done = max_burst == 0;
}

uint64_t xp_rfc_b2b_next(const struct xp_rfc_b2b *b)
{
	if (b->done)
		return 0;
	if (!b->trials)
		return b->max_burst;
	uint64_t mid = b->lo + (b->hi - b->lo) / 2;
	return mid ? mid : 1;
}

void xp_rfc_b2b_record(struct xp_rfc_b2b *b, const struct xp_rfc_trial *t)
{
	uint64_t n = t->burst;
	b->trials++;
	if (t->error) {
		b->done = true;
		return;
	}
	if (t->sent && t->received >= t->sent) {
		b->lo = n;
		b->lo_tested = true;
		if (n >= b->max_burst)
			b->done = true;
	} else {
		b->hi = n;
	}
	if (b->hi <= b->lo + b->res || b->hi <= 1)
		b->done = true;
}

uint64_t xp_rfc_b2b_result(const struct xp_rfc_b2b *b)
{
	return b->lo_tested ? b->lo : 0;
}

double xp_rfc_implied_buffer_s(double b2b_frames, double max_rate)
{
	if (!(b2b_frames > 0) || !(max_rate > 0))
		return 0;
	return b2b_frames / max_rate;
}

/*
 * RFC 9004 section 3 (the DUT as a buffer in front of a forwarding
 * function) and section 5.4, "Benchmark Calculations", word for word in
 * symbols: Implied DUT buffer time = Average num of Back-to-back Frames /
 * Max Theoretical Frame Rate; Corrected DUT Buffer Time = Implied DUT
 * Buffer Time - Implied DUT Buffer Time * Measured Throughput / Max
 * Theoretical Frame Rate, the Measured Throughput being RFC 2544 26.1's at
 * that frame size. The RFC's R is the link's theoretical rate (--line-rate);
 * without one the suite's R is the sender's measured maximum, and the
 * report says so.
 *
 * The model of RFC 9004: during a burst of B frames at the maximum rate R
 * (B / R seconds) the device forwards at its throughput T, so it sends
 * T * B / R of them on and buffers only B * (1 - T / R); as a time at R,
 * (B / R) * (1 - T / R). A throughput at (or above) R buffers nothing.
 */
double xp_rfc_corrected_buffer_s(double b2b_frames, double max_rate, double throughput)
{
	double implied = xp_rfc_implied_buffer_s(b2b_frames, max_rate);
	if (implied <= 0 || !(throughput >= 0))
		return 0;
	double keep = 1 - throughput / max_rate;
	return keep > 0 ? implied * keep : 0;
}

double xp_rfc_l2_bps(double pps, double frame_len)
{
	return pps * frame_len * 8.0;
}

double xp_rfc_l1_bps(double pps, double frame_len)
{
	return pps * (frame_len + L1_OVERHEAD) * 8.0;
}

double xp_rfc_line_pps(double line_bps, double frame_len)
{
	return line_bps > 0 && frame_len > 0 ? line_bps / ((frame_len + L1_OVERHEAD) * 8.0) : 0;
}
