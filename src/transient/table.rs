//! The one built-in table of transient failures: the messages (case-insensitive regular
//! expressions over one line of the attempt's output) and the documented exit statuses of
//! known programs, each with its class, the programs it comes from, its source, and a line
//! recorded from the program (the unit tests check each row against it).
//!
//! A permanent failure must match no row: "Permission denied", "Authentication failed", a
//! repository not found, "404 Not Found", "No such file or directory", "command not found",
//! "certificate verify failed", "Host key verification failed", a shell's syntax error.

use super::Class;

/// One message that marks a failure as transient.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The pattern, a regular expression matched case-insensitively against one line.
    pub pattern: &'static str,
    /// The class it names.
    pub class: Class,
    /// The programs that print it.
    pub programs: &'static str,
    /// Where the message is defined (a manual, a source file, an RFC).
    pub source: &'static str,
    /// A line recorded from one of those programs.
    pub example: &'static str,
}

/// One documented exit status of a known program that marks a failure as transient, when
/// the program is the command itself.
#[derive(Clone, Copy, Debug)]
pub struct Exit {
    /// The program's file name.
    pub program: &'static str,
    /// Its exit status.
    pub status: u8,
    /// The class it names.
    pub class: Class,
    /// Where the status is documented.
    pub source: &'static str,
}

const CURL_ERRORS: &str = "curl's libcurl-errors(3), https://curl.se/libcurl/c/libcurl-errors.html";
const CURL_EXIT: &str = "curl(1), EXIT CODES, https://curl.se/docs/manpage.html#EXIT";
const GLIBC_ERRNO: &str =
    "glibc's strerror texts, https://www.gnu.org/software/libc/manual/html_node/Error-Codes.html";
const NODE_ERRORS: &str =
    "Node.js, Common system errors, https://nodejs.org/api/errors.html#common-system-errors";

/// The messages, in the order they are tried: the first row a line matches gives its class.
pub const ROWS: &[Row] = &[
    // timeout
    Row {
        pattern: r"operation timed out",
        class: Class::Timeout,
        programs: "curl, git (over curl)",
        source: CURL_ERRORS,
        example: "curl: (28) Operation timed out after 5001 milliseconds with 0 bytes received",
    },
    Row {
        pattern: r"connection timed out",
        class: Class::Timeout,
        programs: "ssh, wget, any program through strerror(ETIMEDOUT)",
        source: GLIBC_ERRNO,
        example: "ssh: connect to host 10.0.0.1 port 22: Connection timed out",
    },
    Row {
        pattern: r"\bi/o timeout\b",
        class: Class::Timeout,
        programs: "Go programs (docker, kubectl, terraform)",
        source: "Go's net package, net.go (\"i/o timeout\"), https://pkg.go.dev/net",
        example: "dial tcp 10.0.0.1:443: i/o timeout",
    },
    Row {
        pattern: r"context deadline exceeded",
        class: Class::Timeout,
        programs: "Go programs (docker, kubectl, terraform, helm)",
        source: "Go's context.DeadlineExceeded, https://pkg.go.dev/context",
        example: "Error: Get \"https://registry-1.docker.io/v2/\": context deadline exceeded",
    },
    Row {
        pattern: r"read timed out",
        class: Class::Timeout,
        programs: "pip, Python requests and urllib3",
        source: "urllib3's ReadTimeoutError, https://urllib3.readthedocs.io/en/stable/reference/urllib3.exceptions.html",
        example: "ReadTimeoutError: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out.",
    },
    Row {
        pattern: r"\bETIMEDOUT\b",
        class: Class::Timeout,
        programs: "npm, Node.js programs",
        source: NODE_ERRORS,
        example: "npm ERR! code ETIMEDOUT",
    },
    // dns
    Row {
        pattern: r"could not resolve host",
        class: Class::Dns,
        programs: "curl, git (over curl)",
        source: CURL_ERRORS,
        example: "curl: (6) Could not resolve host: example.invalid",
    },
    Row {
        pattern: r"temporary failure in name resolution",
        class: Class::Dns,
        programs: "any program through getaddrinfo (EAI_AGAIN)",
        source: "glibc's gai_strerror(EAI_AGAIN), https://man7.org/linux/man-pages/man3/getaddrinfo.3.html",
        example: "ssh: Could not resolve hostname example.com: Temporary failure in name resolution",
    },
    Row {
        pattern: r"\bEAI_AGAIN\b",
        class: Class::Dns,
        programs: "npm, Node.js programs",
        source: NODE_ERRORS,
        example: "npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
    },
    Row {
        pattern: r"unable to resolve host address",
        class: Class::Dns,
        programs: "wget",
        source: "GNU Wget's src/host.c, https://www.gnu.org/software/wget/",
        example: "wget: unable to resolve host address 'example.com'",
    },
    // connect
    Row {
        pattern: r"connection refused",
        class: Class::Connect,
        programs: "wget, ssh, Go programs, any program through strerror(ECONNREFUSED)",
        source: GLIBC_ERRNO,
        example: "ssh: connect to host 127.0.0.1 port 2222: Connection refused",
    },
    Row {
        pattern: r"could(n't| not) connect to server",
        class: Class::Connect,
        programs: "curl, git (over curl)",
        source: CURL_ERRORS,
        example: "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
    },
    Row {
        pattern: r"\bECONNREFUSED\b",
        class: Class::Connect,
        programs: "npm, Node.js programs",
        source: NODE_ERRORS,
        example: "npm ERR! connect ECONNREFUSED 127.0.0.1:4873",
    },
    Row {
        pattern: r"no route to host",
        class: Class::Connect,
        programs: "any program through strerror(EHOSTUNREACH)",
        source: GLIBC_ERRNO,
        example: "ssh: connect to host 10.1.2.3 port 22: No route to host",
    },
    Row {
        pattern: r"network is unreachable",
        class: Class::Connect,
        programs: "any program through strerror(ENETUNREACH)",
        source: GLIBC_ERRNO,
        example: "wget: unable to connect: Network is unreachable",
    },
    // reset
    Row {
        pattern: r"connection reset by peer",
        class: Class::Reset,
        programs: "any program through strerror(ECONNRESET)",
        source: GLIBC_ERRNO,
        example: "curl: (56) Recv failure: Connection reset by peer",
    },
    Row {
        pattern: r"\bECONNRESET\b",
        class: Class::Reset,
        programs: "npm, Node.js programs",
        source: NODE_ERRORS,
        example: "npm ERR! network read ECONNRESET",
    },
    Row {
        pattern: r"the remote end hung up unexpectedly",
        class: Class::Reset,
        programs: "git",
        source: "git's remote-curl.c and transport, https://github.com/git/git/blob/master/remote-curl.c",
        example: "fatal: the remote end hung up unexpectedly",
    },
    Row {
        pattern: r"\bearly EOF\b",
        class: Class::Reset,
        programs: "git",
        source: "git's builtin/index-pack.c, https://github.com/git/git/blob/master/builtin/index-pack.c",
        example: "fatal: early EOF",
    },
    Row {
        // At the end of the line: bash's "unexpected EOF while looking for matching" is a
        // syntax error, which is permanent.
        pattern: r"unexpected EOF\s*$",
        class: Class::Reset,
        programs: "Go programs (docker, kubectl, terraform)",
        source: "Go's io.ErrUnexpectedEOF, https://pkg.go.dev/io#pkg-variables",
        example: "Error response from daemon: Get \"https://ghcr.io/v2/\": unexpected EOF",
    },
    Row {
        pattern: r"(?-i)\bGOAWAY\b",
        class: Class::Reset,
        programs: "HTTP/2 clients (curl, Go programs, gRPC)",
        source: "RFC 9113, section 6.8 (GOAWAY), https://www.rfc-editor.org/rfc/rfc9113#section-6.8",
        example: "http2: server sent GOAWAY and closed the connection; LastStreamID=1999",
    },
    Row {
        pattern: r"connection closed by remote host",
        class: Class::Reset,
        programs: "ssh",
        source: "OpenSSH's packet.c, https://github.com/openssh/openssh-portable/blob/master/packet.c",
        example: "ssh_exchange_identification: Connection closed by remote host",
    },
    // tls
    Row {
        pattern: r"TLS handshake timeout",
        class: Class::Tls,
        programs: "Go programs (docker, kubectl, terraform)",
        source: "Go's net/http transport (\"net/http: TLS handshake timeout\"), https://pkg.go.dev/net/http",
        example: "Error response from daemon: Get \"https://registry-1.docker.io/v2/\": net/http: TLS handshake timeout",
    },
    // http
    Row {
        pattern: r"the requested URL returned error: (408|425|429|5\d\d)\b",
        class: Class::Http,
        programs: "curl -f, git (over curl)",
        source: CURL_ERRORS,
        example: "curl: (22) The requested URL returned error: 503",
    },
    Row {
        pattern: r"\b502 Bad Gateway\b",
        class: Class::Http,
        programs: "HTTP clients that print the status line",
        source: "RFC 9110, section 15.6.3, https://www.rfc-editor.org/rfc/rfc9110#section-15.6.3",
        example: "ERROR 502: Bad Gateway. 502 Bad Gateway",
    },
    Row {
        pattern: r"\b503 Service Unavailable\b",
        class: Class::Http,
        programs: "HTTP clients that print the status line",
        source: "RFC 9110, section 15.6.4, https://www.rfc-editor.org/rfc/rfc9110#section-15.6.4",
        example: "HTTP request sent, awaiting response... 503 Service Unavailable",
    },
    Row {
        pattern: r"\b504 Gateway Time-?out\b",
        class: Class::Http,
        programs: "HTTP clients that print the status line",
        source: "RFC 9110, section 15.6.5, https://www.rfc-editor.org/rfc/rfc9110#section-15.6.5",
        example: "HTTP request sent, awaiting response... 504 Gateway Time-out",
    },
    Row {
        pattern: r"RPC failed; HTTP 5\d\d",
        class: Class::Http,
        programs: "git",
        source: "git's remote-curl.c, https://github.com/git/git/blob/master/remote-curl.c",
        example: "error: RPC failed; HTTP 504 curl 22 The requested URL returned error: 504",
    },
    // rate-limit
    Row {
        pattern: r"too many requests",
        class: Class::RateLimit,
        programs: "HTTP clients (429)",
        source: "RFC 6585, section 4, https://www.rfc-editor.org/rfc/rfc6585#section-4",
        example: "HTTP request sent, awaiting response... 429 Too Many Requests",
    },
    Row {
        pattern: r"rate limit exceeded",
        class: Class::RateLimit,
        programs: "GitHub's API, gh, many APIs",
        source: "GitHub REST API, rate limits, https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api",
        example: "API rate limit exceeded for 203.0.113.7.",
    },
    Row {
        pattern: r"\btoomanyrequests\b",
        class: Class::RateLimit,
        programs: "docker (Docker Hub)",
        source: "Docker Hub pull rate limits, https://docs.docker.com/docker-hub/usage/",
        example: "toomanyrequests: You have reached your pull rate limit.",
    },
    Row {
        pattern: r"(?-i)\b(ThrottlingException|RequestLimitExceeded|SlowDown)\b",
        class: Class::RateLimit,
        programs: "aws, AWS SDKs, terraform",
        source: "AWS SDKs' retry behavior, https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html",
        example: "An error occurred (ThrottlingException) when calling the DescribeStacks operation: Rate exceeded",
    },
    Row {
        pattern: r"\bRESOURCE_EXHAUSTED\b",
        class: Class::RateLimit,
        programs: "gRPC clients, gcloud",
        source: "gRPC status codes, https://grpc.io/docs/guides/status-codes/",
        example: "ERROR: (gcloud.compute.instances.list) RESOURCE_EXHAUSTED: Quota exceeded",
    },
    // busy
    Row {
        pattern: r"could not get lock",
        class: Class::Busy,
        programs: "apt-get, apt, dpkg",
        source: "APT's apt-pkg/contrib/fileutl.cc (GetLock), https://salsa.debian.org/apt-team/apt",
        example: "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1234 (apt-get)",
    },
    Row {
        pattern: r"index\.lock'?: File exists",
        class: Class::Busy,
        programs: "git",
        source: "git's lockfile.c, https://github.com/git/git/blob/master/lockfile.c",
        example: "fatal: Unable to create '/src/.git/index.lock': File exists.",
    },
    Row {
        pattern: r"text file busy",
        class: Class::Busy,
        programs: "any program through strerror(ETXTBSY)",
        source: GLIBC_ERRNO,
        example: "cp: cannot create regular file '/usr/local/bin/tool': Text file busy",
    },
    Row {
        pattern: r"resource temporarily unavailable",
        class: Class::Busy,
        programs: "any program through strerror(EAGAIN)",
        source: GLIBC_ERRNO,
        example: "flock: cannot open lock file /run/deploy.lock: Resource temporarily unavailable",
    },
    Row {
        pattern: r"database is locked",
        class: Class::Busy,
        programs: "sqlite3, programs using SQLite (SQLITE_BUSY)",
        source: "SQLite result codes, SQLITE_BUSY, https://www.sqlite.org/rescode.html#busy",
        example: "Error: stepping, database is locked (5)",
    },
];

/// The documented exit statuses of known programs that name a transient class.
pub const EXITS: &[Exit] = &[
    Exit {
        program: "curl",
        status: 6,
        class: Class::Dns,
        source: CURL_EXIT,
    },
    Exit {
        program: "curl",
        status: 7,
        class: Class::Connect,
        source: CURL_EXIT,
    },
    Exit {
        program: "curl",
        status: 28,
        class: Class::Timeout,
        source: CURL_EXIT,
    },
    Exit {
        program: "curl",
        status: 35,
        class: Class::Tls,
        source: CURL_EXIT,
    },
    Exit {
        program: "curl",
        status: 52,
        class: Class::Reset,
        source: CURL_EXIT,
    },
    Exit {
        program: "curl",
        status: 55,
        class: Class::Reset,
        source: CURL_EXIT,
    },
    Exit {
        program: "curl",
        status: 56,
        class: Class::Reset,
        source: CURL_EXIT,
    },
    Exit {
        program: "curl",
        status: 92,
        class: Class::Reset,
        source: CURL_EXIT,
    },
];
