/* gzip + libcurl POST of line protocol (coord_influx_http.h). The body is compressed with zlib
 * (gzip wrapper) and sent with Content-Encoding: gzip, which InfluxDB 1.x and 2.x accept. */
#include "coord_influx_http.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define S_REPLY_MAX   512       // bytes of InfluxDB's answer kept for the error message
#define S_GZIP_WBITS  (15 + 16) // zlib: 32 KiB window, gzip wrapper
#define S_GZIP_MEMLVL 8
#define S_URL_MAX     2048

struct coord_influx_http {
    CURL *curl;                 // owned
    struct curl_slist *headers; // owned
    char url[S_URL_MAX];        // the write URL with its query
    char errbuf[CURL_ERROR_SIZE];
    char reply[S_REPLY_MAX + 1]; // start of the last answer's body
    size_t reply_len;
    unsigned char *gz; // owned; gz_cap bytes
    size_t gz_cap;
};

static size_t s_on_reply(char *data, size_t size, size_t nmemb, void *arg)
{
    coord_influx_http_t *self = arg;
    size_t n = size * nmemb;
    size_t room = S_REPLY_MAX - self->reply_len;
    size_t take = n < room ? n : room;
    for (size_t i = 0; i < take; i++) { // into a log line: no line breaks or control bytes
        unsigned char ch = (unsigned char) data[i];
        self->reply[self->reply_len + i] = ch < 0x20 || ch == 0x7f ? ' ' : (char) ch;
    }
    self->reply_len += take;
    self->reply[self->reply_len] = '\0';
    return n;
}

// The query part: names are URL-escaped by curl.
static int s_build_url(coord_influx_http_t *self, const jf_influx_config_t *cfg, jf_err_t *err)
{
    bool v1 = cfg->db[0] != '\0';
    char *a = curl_easy_escape(self->curl, v1 ? cfg->db : cfg->org, 0);
    char *b = curl_easy_escape(self->curl, v1 ? cfg->rp : cfg->bucket, 0);
    int n = -1;
    if (a && b) {
        n = v1 ? snprintf(self->url, sizeof self->url, "%s/write?db=%s%s%s&precision=ns", cfg->url,
                          a, b[0] ? "&rp=" : "", b)
               : snprintf(self->url, sizeof self->url,
                          "%s/api/v2/write?org=%s&bucket=%s&precision=ns", cfg->url, a, b);
    }
    curl_free(a);
    curl_free(b);
    if (n < 0 || (size_t) n >= sizeof self->url) {
        return jf_err_set(err, -EINVAL, "influx: write URL for '%.200s' is too long", cfg->url);
    }
    return 0;
}

static int s_headers(coord_influx_http_t *self, const char *token, jf_err_t *err)
{
    const char *fixed[] = {"Content-Type: text/plain; charset=utf-8", "Content-Encoding: gzip"};
    for (size_t i = 0; i < 2; i++) {
        struct curl_slist *h = curl_slist_append(self->headers, fixed[i]);
        if (!h) {
            return jf_err_set(err, -ENOMEM, "influx: out of memory");
        }
        self->headers = h;
    }
    if (token && token[0]) {
        size_t size = strlen(token) + 32;
        char *line = malloc(size);
        struct curl_slist *h = NULL;
        if (line) {
            (void) snprintf(line, size, "Authorization: Token %s", token);
            h = curl_slist_append(self->headers, line);
            memset(line, 0, size); // the token does not linger in freed memory
            free(line);
        }
        if (!h) {
            return jf_err_set(err, -ENOMEM, "influx: out of memory");
        }
        self->headers = h;
    }
    return 0;
}

coord_influx_http_t *coord_influx_http_new(const jf_influx_config_t *cfg, const char *token,
                                           jf_err_t *err)
{
    coord_influx_http_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "influx: out of memory");
        return NULL;
    }
    self->curl = curl_easy_init();
    if (!self->curl) {
        jf_err_set(err, -ENOMEM, "influx: curl_easy_init failed");
        goto fail_destroy;
    }
    if (s_build_url(self, cfg, err) != 0 || s_headers(self, token, err) != 0) {
        goto fail_destroy;
    }
    CURL *c = self->curl;
    (void) curl_easy_setopt(c, CURLOPT_URL, self->url);
    (void) curl_easy_setopt(c, CURLOPT_HTTPHEADER, self->headers);
    (void) curl_easy_setopt(c, CURLOPT_ERRORBUFFER, self->errbuf);
    (void) curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); // a thread of its own: no SIGALRM
    (void) curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long) (cfg->timeout_us / 1000));
    (void) curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long) (cfg->timeout_us / 1000));
    (void) curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, s_on_reply);
    (void) curl_easy_setopt(c, CURLOPT_WRITEDATA, self);
    (void) curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    return self;
fail_destroy:
    coord_influx_http_destroy(&self);
    return NULL;
}

void coord_influx_http_destroy(coord_influx_http_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    coord_influx_http_t *self = *self_p;
    curl_slist_free_all(self->headers);
    if (self->curl) {
        curl_easy_cleanup(self->curl);
    }
    free(self->gz);
    free(self);
    *self_p = NULL;
}

// Compresses text into self->gz; *ret_len gets the compressed size.
static int s_gzip(coord_influx_http_t *self, const char *text, size_t len, size_t *ret_len,
                  jf_err_t *err)
{
    size_t need = compressBound((uLong) len) + 64; // + gzip header and trailer
    if (need > self->gz_cap) {
        unsigned char *grown = realloc(self->gz, need);
        if (!grown) {
            return jf_err_set(err, -ENOMEM, "influx: out of memory compressing %zu bytes", len);
        }
        self->gz = grown;
        self->gz_cap = need;
    }
    z_stream zs = {0};
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, S_GZIP_WBITS, S_GZIP_MEMLVL,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
        return jf_err_set(err, -ENOMEM, "influx: deflateInit2 failed");
    }
    zs.next_in = (unsigned char *) text;
    zs.avail_in = (uInt) len;
    zs.next_out = self->gz;
    zs.avail_out = (uInt) self->gz_cap;
    int rc = deflate(&zs, Z_FINISH);
    *ret_len = zs.total_out;
    (void) deflateEnd(&zs);
    return rc == Z_STREAM_END ? 0 : jf_err_set(err, -EIO, "influx: gzip failed (zlib %d)", rc);
}

int coord_influx_http_write(coord_influx_http_t *self, const char *text, size_t len, jf_err_t *err)
{
    size_t gz_len = 0;
    int rc = s_gzip(self, text, len, &gz_len, err);
    if (rc != 0) {
        return rc;
    }
    self->errbuf[0] = '\0';
    self->reply_len = 0;
    self->reply[0] = '\0';
    (void) curl_easy_setopt(self->curl, CURLOPT_POSTFIELDS, (const char *) self->gz);
    (void) curl_easy_setopt(self->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) gz_len);
    CURLcode cc = curl_easy_perform(self->curl);
    if (cc != CURLE_OK) {
        return jf_err_set(err, -EIO, "influx: POST %s failed: %s", self->url,
                          self->errbuf[0] ? self->errbuf : curl_easy_strerror(cc));
    }
    long status = 0;
    (void) curl_easy_getinfo(self->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 && status < 300) {
        return 0;
    }
    return jf_err_set(err, status == 400 ? -EBADMSG : -EIO, "influx: POST %s: HTTP %ld: %.300s",
                      self->url, status, self->reply);
}
