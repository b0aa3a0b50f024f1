//! The table row by row: each row's recorded line names its class, no permanent failure
//! matches any row, the classes' names, the programs' exit statuses.

use super::*;

#[test]
fn every_row_s_recorded_line_names_its_class() {
    let classifier = Classifier::built_in();
    for row in ROWS {
        assert_eq!(
            classifier.class_of(row.example.as_bytes()),
            Some(row.class),
            "{:?} from {}",
            row.example,
            row.programs
        );
        // The row's own pattern matches it too (not only an earlier row of the same class).
        let own = regex::bytes::RegexBuilder::new(row.pattern)
            .case_insensitive(true)
            .build()
            .unwrap();
        assert!(
            own.is_match(row.example.as_bytes()),
            "{}: {}",
            row.pattern,
            row.example
        );
        assert!(
            row.source.contains("https://"),
            "{}: {}",
            row.pattern,
            row.source
        );
    }
}

#[test]
fn no_permanent_failure_is_transient() {
    let classifier = Classifier::built_in();
    let permanent = [
        "git@github.com: Permission denied (publickey).",
        "fatal: Authentication failed for 'https://github.com/org/repo.git/'",
        "remote: Repository not found.",
        "fatal: repository 'https://github.com/org/typo.git/' not found",
        "curl: (22) The requested URL returned error: 404",
        "curl: (22) The requested URL returned error: 401",
        "HTTP request sent, awaiting response... 404 Not Found",
        "cat: /etc/app.conf: No such file or directory",
        "bash: line 1: deploy: command not found",
        "curl: (60) SSL certificate problem: unable to get local issuer certificate",
        "ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed",
        "Host key verification failed.",
        "bash: -c: line 1: unexpected EOF while looking for matching `''",
        "sh: 1: Syntax error: end of file unexpected",
        "npm ERR! code E404",
        "Error: Invalid reference format",
        "error: the performance slowdown is expected",
    ];
    for line in permanent {
        assert_eq!(classifier.class_of(line.as_bytes()), None, "{line:?}");
    }
}

#[test]
fn the_classes_are_named_as_users_type_them() {
    let names: Vec<&str> = Class::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(
        names,
        [
            "timeout",
            "dns",
            "connect",
            "reset",
            "tls",
            "http",
            "rate-limit",
            "busy",
            "pattern"
        ]
    );
    for class in Class::ALL {
        assert_eq!(Class::named(class.name()), Some(class));
        assert_eq!(class.to_string(), class.name());
    }
    assert_eq!(Class::named("DNS"), None);
    assert_eq!(Class::named(""), None);
    // Every class but `pattern` (the user's own) has rows in the table.
    for class in Class::ALL.into_iter().filter(|c| *c != Class::Pattern) {
        let has_row = ROWS.iter().any(|r| r.class == class);
        let has_exit = EXITS.iter().any(|e| e.class == class);
        assert!(
            has_row || has_exit || class == Class::Http,
            "{class} has no row"
        );
    }
}

#[test]
fn curl_s_documented_exit_statuses_name_their_classes() {
    assert_eq!(class_of_exit("curl", 6), Some(Class::Dns));
    assert_eq!(class_of_exit("curl", 7), Some(Class::Connect));
    assert_eq!(class_of_exit("curl", 28), Some(Class::Timeout));
    assert_eq!(class_of_exit("curl", 35), Some(Class::Tls));
    for reset in [52, 55, 56, 92] {
        assert_eq!(class_of_exit("curl", reset), Some(Class::Reset));
    }
    // 22 (an HTTP error with -f) is read from its line; 60 (a certificate) is permanent.
    assert_eq!(class_of_exit("curl", 22), None);
    assert_eq!(class_of_exit("curl", 60), None);
    assert_eq!(class_of_exit("wget", 4), None);
    assert_eq!(class_of_exit("xcurl", 7), None);
}

#[test]
fn a_list_of_classes_is_read_and_shown() {
    let set = Classes::parse_list("dns,connect, timeout").unwrap();
    assert!(set.contains(Class::Dns) && set.contains(Class::Connect));
    assert!(set.contains(Class::Timeout) && !set.contains(Class::Reset));
    assert_eq!(set.to_string(), "timeout,dns,connect");
    assert_eq!(Classes::parse_list("dns,typo"), Err("typo".to_string()));
    assert_eq!(Classes::parse_list(""), Err(String::new()));
    assert!(Class::ALL.into_iter().all(|c| Classes::all().contains(c)));
    // A line that is not UTF-8 is still read.
    let classifier = Classifier::built_in();
    assert_eq!(
        classifier.class_of(b"\xff\xfe: Connection refused"),
        Some(Class::Connect)
    );
}
