/* The report's page (coord_report.h): one HTML file with the vendored Chart.js, report.js and
 * report.css embedded (generated into C arrays by embed.cmake) and the data as JSON inside a
 * script element. The sweep's name and every other text reach the page only through that JSON,
 * which report.js puts in as text, so nothing here escapes HTML. */
#include "coord_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern const unsigned char coord_report_asset_chartjs[];
extern const size_t coord_report_asset_chartjs_len;
extern const unsigned char coord_report_asset_js[];
extern const size_t coord_report_asset_js_len;
extern const unsigned char coord_report_asset_css[];
extern const size_t coord_report_asset_css_len;

static void s_put(FILE *out, const char *text)
{
    fputs(text, out);
}

static void s_put_asset(FILE *out, const unsigned char *bytes, size_t len)
{
    (void) fwrite(bytes, 1, len, out); // checked once at the end through ferror
}

int coord_report_write_html(const json_t *data, FILE *out, jf_err_t *err)
{
    // JSON_ESCAPE_SLASH writes "<\/script>" for "</script>", so no string in the data can end
    // the script element early.
    char *json = json_dumps(data, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_ENSURE_ASCII);
    if (!json) {
        return jf_err_set(err, -ENOMEM, "report: out of memory");
    }
    s_put(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<title>jetfleet report</title>\n<style>\n");
    s_put_asset(out, coord_report_asset_css, coord_report_asset_css_len);
    s_put(out, "</style>\n<script>\n");
    s_put_asset(out, coord_report_asset_chartjs, coord_report_asset_chartjs_len);
    s_put(out,
          "\n</script>\n</head>\n<body>\n<header id=\"jf-head\"></header>\n"
          "<main id=\"jf-figures\"></main>\n<script type=\"application/json\" id=\"jf-data\">");
    s_put(out, json);
    s_put(out, "</script>\n<script>\n");
    s_put_asset(out, coord_report_asset_js, coord_report_asset_js_len);
    s_put(out, "\n</script>\n</body>\n</html>\n");
    free(json);
    if (fflush(out) != 0 || ferror(out)) {
        return jf_err_set(err, -EIO, "report: writing the page failed: %s", strerror(errno));
    }
    return 0;
}
