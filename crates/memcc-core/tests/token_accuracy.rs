//! The token estimate against exact cl100k_base counts (tiktoken) on English, Chinese, mixed and
//! code samples. The measured figures are printed (`cargo test -p memcc-core --test
//! token_accuracy -- --nocapture`) and quoted in docs/reference.md; the bounds below keep them honest.

use memcc_core::estimate_tokens;

const ENGLISH: &[&str] = &[
    "Caroline went to the LGBTQ support group on 7 May 2023 and said it was so powerful.",
    "We decided to take the night train from Lisbon to Madrid instead of flying; I prefer trains.",
    "Can you compare the two hotels near the old town again? The second one had better reviews for families, \
     and it is closer to the station, which matters with luggage.",
    "Booked it: our flight is LH 1174 from Frankfurt on 14 March at 07:25, seats 32A and 32B.",
    "The quarterly report is due on Friday; Bruno will send the invoice numbers by Wednesday afternoon.",
];

const CHINESE: &[&str] = &[
    "我住在北京，下个月搬到上海。",
    "我喜欢喝茶，不喜欢咖啡，因为咖啡太苦了。",
    "明天下午三点在会议室讨论项目进度，请大家提前准备好材料。",
    "她的女儿对花生过敏，所以晚饭不能点沙爹。",
    "我们决定坐夜车从里斯本去马德里，而不是坐飞机。",
];

const MIXED: &[&str] = &[
    "我们的航班是 LH 1174，3月14日早上7:25从 Frankfurt 出发。",
    "Meeting notes 会议记录: deadline 是周五, owner = Bruno (财务部).",
    "用户说 I prefer trains，所以我们订了 night train 去 Madrid。",
];

const CODE: &[&str] = &[
    "fn main() {\n    let v: Vec<i32> = (0..10).map(|x| x * x).collect();\n    println!(\"{:?}\", v);\n}",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01' ORDER BY id LIMIT 10;",
    "{\"role\": \"assistant\", \"content\": [{\"type\": \"toolCall\", \"id\": \"call_1\", \"name\": \"read\", \"arguments\": {\"path\": \"src/main.rs\"}}]}",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
];

/// (estimated total, exact total, mean absolute relative error per sample)
fn measure(samples: &[&str]) -> (usize, usize, f64) {
    let bpe = tiktoken_rs::cl100k_base().expect("cl100k_base ships inside tiktoken-rs");
    let mut est = 0;
    let mut exact = 0;
    let mut err = 0.0;
    for s in samples {
        let e = estimate_tokens(s);
        let x = bpe.encode_with_special_tokens(s).len();
        est += e;
        exact += x;
        err += (e as f64 - x as f64).abs() / x as f64;
    }
    (est, exact, err / samples.len() as f64)
}

#[test]
fn estimate_is_close_to_cl100k() {
    for (name, samples, max_total_err, max_mean_err) in [
        ("english", ENGLISH, 0.25, 0.30),
        ("chinese", CHINESE, 0.35, 0.40),
        ("mixed", MIXED, 0.35, 0.40),
        ("code", CODE, 0.35, 0.40),
    ] {
        let (est, exact, mean) = measure(samples);
        let total = (est as f64 - exact as f64) / exact as f64;
        println!(
            "{name:8} estimate {est:4} exact {exact:4} total error {:+.1}%  mean |error| {:.1}%",
            total * 100.0,
            mean * 100.0
        );
        assert!(total.abs() <= max_total_err, "{name}: total error {total:.3}");
        assert!(mean <= max_mean_err, "{name}: mean error {mean:.3}");
    }
}
