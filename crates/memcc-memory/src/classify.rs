//! Routing text to a (wing, room) namespace by topic lexicons, in English and Chinese.
//!
//! A wing is a broad domain (travel, health…), a room the keyword that decided it (flight,
//! allergy…). Rules are data: the defaults below, or a JSON list supplied by configuration.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WingRule {
    pub wing: String,
    /// Latin keywords match whole words (a trailing "s" is ignored); CJK keywords match as substrings.
    pub keywords: Vec<String>,
}

pub const DEFAULT_WING: &str = "general";
pub const DEFAULT_ROOM: &str = "misc";

fn rule(wing: &str, keywords: &str) -> WingRule {
    WingRule { wing: wing.into(), keywords: keywords.split_whitespace().map(String::from).collect() }
}

pub fn default_rules() -> Vec<WingRule> {
    vec![
        rule(
            "coding",
            "code bug rust python javascript typescript function compile compiler git commit api deploy server database sql test debug refactor repository 代码 编程 程序 函数 数据库 部署 调试",
        ),
        rule(
            "work",
            "meeting project deadline client boss manager office colleague job salary promotion interview career team presentation report 会议 项目 工作 老板 同事 客户 加班 面试 升职",
        ),
        rule(
            "personal",
            "family friend daughter son wife husband birthday wedding kid child children mom dad mother father sister brother parent grandma grandpa partner 家人 朋友 女儿 儿子 妻子 丈夫 生日 孩子 妈妈 爸爸 姐姐 哥哥 妹妹 弟弟",
        ),
        rule(
            "health",
            "doctor allergy allergic medicine hospital workout gym diet sleep sick therapy therapist symptom pain vitamin run running yoga 医生 过敏 医院 药 健身 睡眠 生病 疼 锻炼",
        ),
        rule(
            "travel",
            "flight hotel trip travel vacation train airport passport visa itinerary beach tour luggage 旅行 航班 酒店 机场 火车 签证 度假 旅游",
        ),
        rule(
            "finance",
            "money budget invoice bank invest investment stock tax loan price cost euro dollar saving mortgage rent 钱 预算 银行 投资 股票 税 贷款 房租 工资",
        ),
        rule(
            "hobbies",
            "painting paint music guitar piano book reading novel hiking camping game movie film photography pottery dance garden 画画 音乐 吉他 钢琴 读书 小说 爬山 露营 电影 摄影 跳舞",
        ),
        rule(
            "food",
            "restaurant cook cooking recipe coffee tea dinner lunch breakfast vegetarian vegan bake 餐厅 做饭 咖啡 茶 晚饭 午饭 早饭 素食",
        ),
    ]
}

pub struct Classifier {
    /// Latin keyword (singular, lowercase) → wing index.
    words: HashMap<String, usize>,
    /// CJK keyword → wing index.
    cjk: Vec<(String, usize)>,
    wings: Vec<String>,
}

impl Default for Classifier {
    fn default() -> Self {
        Self::new(&default_rules())
    }
}

fn singular(w: &str) -> &str {
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") { &w[..w.len() - 1] } else { w }
}

impl Classifier {
    pub fn new(rules: &[WingRule]) -> Self {
        let mut words = HashMap::new();
        let mut cjk = Vec::new();
        let mut wings = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            wings.push(r.wing.clone());
            for k in &r.keywords {
                let k = k.to_lowercase();
                if k.chars().any(memcc_core::text::is_cjk_letter) {
                    cjk.push((k, i));
                } else {
                    words.insert(singular(&k).to_string(), i);
                }
            }
        }
        Classifier { words, cjk, wings }
    }

    /// (wing, room) of `text`: the wing with the most keyword hits, and its most frequent keyword.
    pub fn classify(&self, text: &str) -> (String, String) {
        let lower = text.to_lowercase();
        let mut hits: HashMap<usize, HashMap<String, usize>> = HashMap::new();
        for w in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 1) {
            let s = singular(w);
            if let Some(&i) = self.words.get(s) {
                *hits.entry(i).or_default().entry(s.to_string()).or_default() += 1;
            }
        }
        for (k, i) in &self.cjk {
            let n = lower.matches(k.as_str()).count();
            if n > 0 {
                *hits.entry(*i).or_default().entry(k.clone()).or_default() += n;
            }
        }
        let best = hits
            .iter()
            .map(|(i, rooms)| (*i, rooms.values().sum::<usize>(), rooms))
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
        match best {
            Some((i, _, rooms)) => {
                let room = rooms
                    .iter()
                    .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                    .map(|(k, _)| k.clone())
                    .unwrap_or_else(|| DEFAULT_ROOM.into());
                (self.wings[i].clone(), room)
            }
            None => (DEFAULT_WING.into(), DEFAULT_ROOM.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_english_and_chinese() {
        let c = Classifier::default();
        assert_eq!(
            c.classify("Our flight to Lisbon leaves at 7, the flight number is LH 1174"),
            ("travel".into(), "flight".into())
        );
        assert_eq!(c.classify("The compiler reports a bug in this function").0, "coding");
        assert_eq!(c.classify("我对花生过敏，需要看医生").0, "health");
        assert_eq!(c.classify("明天的会议讨论项目进度").0, "work");
        assert_eq!(c.classify("nothing in particular"), ("general".into(), "misc".into()));
    }

    #[test]
    fn rules_are_configurable() {
        let c = Classifier::new(&[WingRule { wing: "pets".into(), keywords: vec!["dog".into(), "猫".into()] }]);
        assert_eq!(c.classify("my dogs love walks"), ("pets".into(), "dog".into()));
        assert_eq!(c.classify("我的猫很可爱").0, "pets");
    }
}
