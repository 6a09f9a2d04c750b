select id as payment_id, order_id, method, amount
from {{ ref('raw_payments') }}
